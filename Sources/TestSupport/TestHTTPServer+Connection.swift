import EventLoop
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One connection: read requests, ask the handler, write what it says, until either side
/// closes (RFC 9112 §9.3: HTTP/1.0 requests, `Connection: close` and close-delimited
/// bodies end the connection).
extension TestHTTPServer.Core {
    typealias Request = TestHTTPServer.Request

    func serve(_ descriptor: Int32, number: Int) {
        var timeout = timeval(tv_sec: Int(idleTimeout.components.seconds),
                              tv_usec: Int(idleTimeout.components.attoseconds / 1_000_000_000_000))
        if timeout.tv_sec == 0 && timeout.tv_usec == 0 { timeout.tv_usec = 1000 }
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))

        let stream: ServerStream
        var tlsStream: TLSServerStream?
        if let tls {
            guard let session = TLSServerStream(descriptor: descriptor, context: tls), session.handshake() else { return }
            stream = session
            tlsStream = session
        } else {
            stream = PlainServerStream(descriptor: descriptor)
        }
        var buffer: [UInt8] = []
        var index = 0
        while true {
            let request: Request
            switch readRequest(stream, &buffer, connection: number, index: index + 1) {
            case .request(let received): request = received
            case .failed(let reply):
                if let reply { _ = stream.write(reply) }
                tlsStream?.shutdown()
                return
            case .ended:
                tlsStream?.shutdown()
                return
            }
            index += 1
            let wantsClose = request.version == "HTTP/1.0"
                || (request.header("Connection")?.lowercased().contains("close") ?? false)
            switch handler(request) {
            case .respond(let response):
                let (bytes, closes) = TestHTTPServer.serialize(response, for: request)
                guard stream.write(bytes), !closes, !wantsClose else {
                    tlsStream?.shutdown()
                    return
                }
            case .raw(let bytes, let close):
                guard stream.write(bytes), !close, !wantsClose else {
                    tlsStream?.shutdown()
                    return
                }
            case .rawParts(let parts, let pause, let close):
                for (number, part) in parts.enumerated() {
                    if number > 0 { TestHTTPServer.sleep(pause) }
                    guard stream.write(part) else { return }
                }
                if close || wantsClose {
                    tlsStream?.shutdown()
                    return
                }
            case .drop:
                return
            case .hang:
                var ignored: [UInt8] = []
                while stream.read(into: &ignored) { ignored.removeAll() }
                return
            }
        }
    }
}

extension TestHTTPServer {
    /// Sleeps the calling thread: a server thread's pause that is part of a scenario (a
    /// response split across writes, a cold start). Never a test's way of waiting.
    public static func sleep(_ duration: Duration) {
        let nanoseconds = duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        guard nanoseconds > 0 else { return }
        pause(Nanoseconds(nanoseconds))
    }
}

extension TestHTTPServer.Core {
    enum ReadOutcome {
        case request(Request)
        /// The client closed, the idle timeout passed or the server stopped.
        case ended
        /// A request the server cannot read; the bytes are the error reply, if any.
        case failed([UInt8]?)
    }

    /// Reads one request (head, then a `Content-Length` body) from `stream`.
    func readRequest(_ stream: ServerStream, _ buffer: inout [UInt8], connection: Int, index: Int) -> ReadOutcome {
        let terminator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            if let found = TestHTTPServer.find(terminator, in: buffer) {
                headEnd = found
            } else {
                guard buffer.count < 1 << 20 else { return .failed(TestHTTPServer.plain(431, "request header too large")) }
                guard stream.read(into: &buffer) else { return buffer.isEmpty ? .ended : .failed(nil) }
            }
        }
        let head = String(decoding: buffer[0..<headEnd!], as: UTF8.self)
        buffer.removeFirst(headEnd! + 4)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else {
            return .failed(TestHTTPServer.plain(400, "malformed request line"))
        }
        var headers: [(String, String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return .failed(TestHTTPServer.plain(400, "malformed header")) }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        func header(_ name: String) -> String? { headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1 }
        if header("Transfer-Encoding") != nil {
            return .failed(TestHTTPServer.plain(501, "chunked request bodies are not supported by this test server"))
        }
        let length = Int(header("Content-Length") ?? "0") ?? -1
        guard length >= 0 else { return .failed(TestHTTPServer.plain(400, "bad Content-Length")) }
        if length > 0, header("Expect")?.lowercased() == "100-continue" {
            guard stream.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return .ended }
        }
        while buffer.count < length {
            guard stream.read(into: &buffer) else { return .failed(nil) }
        }
        let body = Array(buffer[0..<length])
        buffer.removeFirst(length)
        return .request(Request(method: String(requestLine[0]), target: String(requestLine[1]), version: String(requestLine[2]),
                                headers: headers, body: body, connection: connection, indexOnConnection: index))
    }
}

extension TestHTTPServer {
    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<start + needle.count]) == needle { return start }
        }
        return nil
    }

    /// A plain-text error reply that closes the connection.
    static func plain(_ status: Int, _ text: String) -> [UInt8] {
        serialize(Response(status: status, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Connection", "close")],
                           text: text + "\n"), for: nil).bytes
    }
}
