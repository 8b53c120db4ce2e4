import EventLoop
import HTTP1
import SystemIO

/// Reads one HTTP/1.1 response from bytes as they arrive; does no I/O. Feed it the
/// connection's buffer after each read (`read` consumes what it used and returns the
/// response once complete); at the end of the stream call `finish`.
///
/// The head, the framing (RFC 9112 §6.3) and chunked bodies are parsed by HTTP1; what is
/// the client's own: interim 1xx responses (100 Continue, 103 Early Hints) are skipped and
/// 101 refused; a status line must say HTTP/1.0 or 1.1 and 100–599; Transfer-Encoding
/// must be chunked alone (the client sends no `TE`, RFC 9110 §10.1.4); the body is collected
/// up to `maxBodyBytes` — announced larger fails at once, before anything more is read.
/// The head (and each chunk-size line, and the trailers) may be at most 64 KiB.
struct ResponseReader {
    enum State {
        case head
        case body(BodyTracker)
        case complete
    }

    static let maxHeadBytes = 64 * 1024

    let method: String
    let maxBodyBytes: Int
    private(set) var state = State.head
    /// True once any byte of the response has been consumed.
    private(set) var hasStarted = false
    private var scanner = HeadScanner(limit: maxHeadBytes)
    private var head: ResponseHead?
    private var framing = BodyFraming.untilClose
    private var body: [UInt8] = []

    init(method: String, maxBodyBytes: Int) {
        self.method = method
        self.maxBodyBytes = maxBodyBytes
    }

    /// Whether the connection may carry another request after this complete response: the
    /// server keeps it (RFC 9112 §9.3), and the body's end was framed rather than marked by
    /// the server closing, and not framed twice (Transfer-Encoding with Content-Length).
    var allowsReuse: Bool {
        guard case .complete = state, let head, framing != .untilClose, !head.hasConflictingFraming else {
            return false
        }
        return head.keepAlive
    }

    /// Consumes from `buffer` and returns the response once it is complete (later bytes
    /// stay in the buffer); nil when more bytes are needed.
    mutating func read(_ buffer: inout ByteBuffer) throws(HTTPError) -> HTTPResponse? {
        while true {
            switch state {
            case .head:
                guard let bytes = try nextHead(&buffer) else { return nil }
                try start(bytes)
            case .body(var tracker):
                guard buffer.readableBytes > 0 else { return nil }
                do {
                    try buffer.readWithUnsafeReadableBytes { bytes throws(HTTP1Error) in
                        try tracker.consume(bytes) { body.append(contentsOf: $0) }
                    }
                } catch {
                    throw mapped(error)
                }
                guard tracker.isComplete else {
                    state = .body(tracker)
                    return nil
                }
                state = .complete
            case .complete:
                return response
            }
        }
    }

    /// The stream ended (`clean`: a FIN, or TLS close_notify). Completes a body delimited
    /// by the close; anything else still open means the response was cut short.
    mutating func finish(clean: Bool) throws(HTTPError) -> HTTPResponse {
        guard case .body(let tracker) = state, tracker.isUntilClose, clean, let response else { throw .closed }
        state = .complete
        return response
    }

    private var response: HTTPResponse? {
        head.map { HTTPResponse(status: $0.status, reason: $0.reasonPhrase, headers: $0.fields.pairs, body: body) }
    }

    /// The bytes of the next head, taken from `buffer`; nil until it has all arrived.
    private mutating func nextHead(_ buffer: inout ByteBuffer) throws(HTTPError) -> [UInt8]? {
        var scanner = self.scanner
        let length: Int?
        do {
            length = try buffer.withUnsafeReadableBytes { bytes throws(HTTP1Error) in try scanner.scan(bytes) }
        } catch {
            throw mapped(error)
        }
        self.scanner = scanner
        guard let length, let bytes = buffer.readBytes(length: length) else { return nil }
        hasStarted = true
        return bytes
    }

    /// A head has arrived: skip it (1xx), or decide how its body is read.
    private mutating func start(_ bytes: [UInt8]) throws(HTTPError) {
        let head: ResponseHead
        do { head = try ResponseHead(bytes) } catch { throw mapped(error) }
        guard head.minorVersion <= 1 else {
            throw mapped(.malformedStatusLine(HTTPSyntax.printable(bytes[head.fields.startLine])))
        }
        guard head.status <= 599 else { throw mapped(.statusOutOfRange(head.status)) }
        guard head.status != 101 else { throw .malformedResponse("unexpected 101 Switching Protocols") }
        if head.isInformational {
            scanner.reset()  // the real response follows
            return
        }
        do throws(HTTP1Error) {
            framing = try head.bodyFraming(requestMethod: method, chunkedOnly: true)
            let limits = BodyTracker.Limits(
                lineBytes: Self.maxHeadBytes, trailerBytes: Self.maxHeadBytes,
                contentBytes: Int64(maxBodyBytes))
            let tracker = try BodyTracker(framing, limits: limits)
            if case .length(let count) = framing { body.reserveCapacity(Int(count)) }
            self.head = head
            state = tracker.isComplete ? .complete : .body(tracker)
        } catch {
            throw mapped(error)
        }
    }

    private func mapped(_ error: HTTP1Error) -> HTTPError {
        if case .bodyTooLarge = error { return .responseTooLarge(limit: maxBodyBytes) }
        return .malformedResponse(error.description)
    }
}
