import EventLoop

/// Reads one HTTP/1.1 response (RFC 9112) from bytes as they arrive; does no I/O. Feed it
/// the connection's buffer after each read (`parse` consumes what it used and returns the
/// response once complete); at the end of the stream call `finish`.
///
/// Body framing (§6.3), first rule that applies: no body for a HEAD request, 1xx, 204 and
/// 304; `Transfer-Encoding: chunked`; `Content-Length`; else everything until the server
/// closes. Interim 1xx responses (100 Continue) are skipped. Limits: the status line and
/// headers together (and the chunked trailers) at most 64 KiB, the body at most
/// `maxBodyBytes` — announced larger fails at once, before anything more is read.
struct ResponseParser {
    enum Framing: Equatable {
        case none
        case length(Int)
        case chunked
        case untilClose
    }

    enum State: Equatable {
        case statusLine
        case headers
        case body
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case complete
    }

    static let maxHeadBytes = 64 * 1024

    // Internal rather than private: the head and body steps live in extensions.
    let isHeadRequest: Bool
    let maxBodyBytes: Int
    var state = State.statusLine
    /// True once any byte of the response has been consumed.
    var hasStarted = false
    var headBytes = 0
    var minorVersion = 1
    var status = 0
    var reason = ""
    var headers: [(String, String)] = []
    var body: [UInt8] = []
    var framing = Framing.untilClose
    /// Both Transfer-Encoding and Content-Length (§6.3 rule 3): read as chunked, never reuse.
    var conflictingFraming = false

    init(method: String, maxBodyBytes: Int) {
        isHeadRequest = method == "HEAD"
        self.maxBodyBytes = maxBodyBytes
    }

    /// Whether the connection may carry another request after this complete response:
    /// HTTP/1.1 without `Connection: close` (1.0 only with `keep-alive`), and a body whose
    /// end was framed rather than marked by the server closing.
    var allowsReuse: Bool {
        guard state == .complete, framing != .untilClose, !conflictingFraming else { return false }
        let tokens = connectionTokens
        return minorVersion >= 1 ? !tokens.contains("close") : tokens.contains("keep-alive")
    }

    private var connectionTokens: [String] {
        headers.filter { $0.0.lowercased() == "connection" }
            .flatMap { $0.1.split(separator: ",").map { $0.trimmingSpaces.lowercased() } }
    }

    /// Consumes from `buffer` and returns the response once it is complete (later bytes
    /// stay in the buffer); nil when more bytes are needed.
    mutating func parse(_ buffer: inout ByteBuffer) throws(HTTPError) -> HTTPResponse? {
        while state != .complete {
            let before = buffer.readableBytes
            let progressed = try step(&buffer)
            if buffer.readableBytes < before { hasStarted = true }
            guard progressed else { return nil }
        }
        return HTTPResponse(status: status, reason: reason, headers: headers, body: body)
    }

    /// The stream ended (`clean`: a FIN, or TLS close_notify). Completes a body delimited
    /// by the close; anything else still open means the response was cut short.
    mutating func finish(clean: Bool) throws(HTTPError) -> HTTPResponse {
        guard state == .body, framing == .untilClose, clean else { throw .closed }
        state = .complete
        return HTTPResponse(status: status, reason: reason, headers: headers, body: body)
    }

    /// One step of the machine; false when it needs more bytes.
    private mutating func step(_ buffer: inout ByteBuffer) throws(HTTPError) -> Bool {
        switch state {
        case .statusLine:
            guard let line = try headLine(&buffer) else { return false }
            try parseStatusLine(line)
            state = .headers
        case .headers:
            guard let line = try headLine(&buffer) else { return false }
            if line.isEmpty { try endOfHead() } else { try parseHeader(line) }
        case .body:
            return try readBody(&buffer)
        case .chunkSize:
            guard let line = try headLine(&buffer) else { return false }
            try parseChunkSize(line)
        case .chunkData(let left):
            let count = min(left, buffer.readableBytes)
            guard count > 0 else { return false }
            take(count, from: &buffer)
            state = count == left ? .chunkDataEnd : .chunkData(remaining: left - count)
        case .chunkDataEnd:
            guard let line = try headLine(&buffer) else { return false }
            guard line.isEmpty else { throw .malformedResponse("chunk data longer than its size") }
            headBytes = 0
            state = .chunkSize
        case .trailers:
            guard let line = try headLine(&buffer) else { return false }
            if line.isEmpty { state = .complete }
        case .complete:
            return false
        }
        return true
    }

    /// Body bytes for `.length` and `.untilClose` framing.
    private mutating func readBody(_ buffer: inout ByteBuffer) throws(HTTPError) -> Bool {
        switch framing {
        case .length(let total):
            let count = min(total - body.count, buffer.readableBytes)
            take(count, from: &buffer)
            if body.count == total { state = .complete }
            return body.count == total
        case .untilClose:
            guard buffer.readableBytes > 0 else { return false }
            guard body.count + buffer.readableBytes <= maxBodyBytes else { throw .responseTooLarge(limit: maxBodyBytes) }
            take(buffer.readableBytes, from: &buffer)
            return false
        case .none, .chunked:
            return true  // not reached: endOfHead moves on for these
        }
    }

    /// Moves `count` readable bytes to the body.
    private mutating func take(_ count: Int, from buffer: inout ByteBuffer) {
        guard count > 0 else { return }
        buffer.readWithUnsafeReadableBytes { bytes in
            body.append(contentsOf: bytes.prefix(count))
            return count
        }
    }

    /// The next line (without CR LF; a bare LF is accepted, RFC 9112 §2.2), counted
    /// against the head limit; nil when no full line has arrived yet.
    private mutating func headLine(_ buffer: inout ByteBuffer) throws(HTTPError) -> [UInt8]? {
        let newline = buffer.withUnsafeReadableBytes { $0.firstIndex(of: UInt8(ascii: "\n")) }
        guard let newline else {
            if headBytes + buffer.readableBytes > Self.maxHeadBytes { throw .malformedResponse("header section over 64 KiB") }
            return nil
        }
        headBytes += newline + 1
        if headBytes > Self.maxHeadBytes { throw .malformedResponse("header section over 64 KiB") }
        guard var line = buffer.readBytes(length: newline + 1) else { return nil }
        line.removeLast()
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return line
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (HTTP's OWS).
    var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
