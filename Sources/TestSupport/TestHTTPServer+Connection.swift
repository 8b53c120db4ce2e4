import EventLoop
import Foundation
import HTTP1
import SystemIO

#if canImport(Glibc)
    import Glibc
#endif

/// One connection: read requests, ask the handler, write what it says, until either side
/// closes (RFC 9112 §9.3: HTTP/1.0 requests, `Connection: close` and close-delimited
/// bodies end the connection).
extension TestHTTPServer.Core {
    typealias Request = TestHTTPServer.Request

    func serve(_ descriptor: Int32, number: Int) {
        var timeout = timeval(
            tv_sec: Int(idleTimeout.components.seconds),
            tv_usec: Int(idleTimeout.components.attoseconds / 1_000_000_000_000))
        if timeout.tv_sec == 0 && timeout.tv_usec == 0 { timeout.tv_usec = 1000 }
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))

        let stream: ServerStream
        var tlsStream: TLSServerStream?
        if let tls {
            guard let session = TLSServerStream(descriptor: descriptor, context: tls), session.handshake() else {
                return
            }
            stream = session
            tlsStream = session
        } else {
            stream = PlainServerStream(descriptor: descriptor)
        }
        var buffer: [UInt8] = []
        var index = 0
        while true {
            let request: Request
            let wantsClose: Bool
            switch readRequest(stream, &buffer, connection: number, index: index + 1) {
            case .request(let received, let closes):
                request = received
                wantsClose = closes
            case .failed(let reply):
                if let reply { _ = stream.write(reply) }
                tlsStream?.shutdown()
                return
            case .ended:
                tlsStream?.shutdown()
                return
            }
            index += 1
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
        /// `wantsClose`: HTTP/1.0, or `Connection: close` (RFC 9112 §9.3).
        case request(Request, wantsClose: Bool)
        /// The client closed, the idle timeout passed or the server stopped.
        case ended
        /// A request the server cannot read; the bytes are the error reply, if any.
        case failed([UInt8]?)
    }

    /// Reads one request from `stream`: the head and its body (Content-Length or chunked),
    /// parsed by HTTP1 as the proxy parses its clients' requests, so a malformed request
    /// gets the 400 (431 for a head over 1 MiB) it would get there.
    func readRequest(_ stream: ServerStream, _ buffer: inout [UInt8], connection: Int, index: Int) -> ReadOutcome {
        var scanner = HeadScanner(limit: 1 << 20)
        var headLength: Int?
        while true {
            do {
                headLength = try buffer.withUnsafeBytes { bytes in try scanner.scan(bytes) }
            } catch {
                return .failed(TestHTTPServer.plain(431, "request header too large"))
            }
            if headLength != nil { break }
            guard stream.read(into: &buffer) else { return buffer.isEmpty ? .ended : .failed(nil) }
        }
        let head: RequestHead
        let framing: BodyFraming
        do throws(HTTP1Error) {
            head = try RequestHead(Array(buffer[0..<headLength!]))
            framing = try head.bodyFraming()
        } catch {
            return .failed(TestHTTPServer.plain(400, error.description))
        }
        buffer.removeFirst(headLength!)
        if framing != .length(0), head.fields.containsToken("100-continue", in: "expect") {
            guard stream.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return .ended }
        }
        var tracker = BodyTracker(framing)
        var body: [UInt8] = []
        while !tracker.isComplete {
            if buffer.isEmpty {
                guard stream.read(into: &buffer) else { return .failed(nil) }
            }
            do {
                let used = try buffer.withUnsafeBytes { bytes in
                    try tracker.consume(bytes) { body.append(contentsOf: $0) }
                }
                buffer.removeFirst(used)
            } catch {
                return .failed(TestHTTPServer.plain(400, "\(error)"))
            }
        }
        let request = Request(
            method: head.method, target: head.target, version: "HTTP/1.\(head.minorVersion)",
            headers: head.fields.pairs, body: body, connection: connection, indexOnConnection: index)
        return .request(
            request, wantsClose: head.minorVersion == 0 || head.fields.containsToken("close", in: "connection"))
    }
}

extension TestHTTPServer {
    /// A plain-text error reply that closes the connection.
    static func plain(_ status: Int, _ text: String) -> [UInt8] {
        serialize(
            Response(
                status: status, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Connection", "close")],
                text: text + "\n"), for: nil
        ).bytes
    }
}
