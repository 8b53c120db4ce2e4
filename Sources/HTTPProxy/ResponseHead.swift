/// An origin's response head (RFC 9112 §4): status and reason from the status line, and
/// the fields, which the proxy forwards without its hop-by-hop ones.
public struct ResponseHead: Sendable {
    public let fields: HeaderFields
    public let status: Int
    /// HTTP/1.`minorVersion`.
    public let minorVersion: Int
    /// The reason phrase as sent (may be empty).
    let reason: Range<Int>

    /// - Throws: `.malformedStatusLine` unless it reads `HTTP/1.d SP 3DIGIT [SP reason]`.
    public init(_ bytes: [UInt8]) throws(ProxyError) {
        do { fields = try HeaderFields(bytes) } catch { throw .malformedStatusLine }
        let line = fields.startLine
        guard line.count >= 12, let minor = RequestHead.minorVersion(bytes[line.lowerBound..<line.lowerBound + 8]),
              bytes[line.lowerBound + 8] == 0x20 else { throw .malformedStatusLine }
        var status = 0
        for byte in bytes[line.lowerBound + 9..<line.lowerBound + 12] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { throw .malformedStatusLine }
            status = status * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard status >= 100, line.count == 12 || bytes[line.lowerBound + 12] == 0x20 else { throw .malformedStatusLine }
        self.status = status
        minorVersion = minor
        reason = min(line.lowerBound + 13, line.upperBound)..<line.upperBound
    }

    public var reasonPhrase: String { String(decoding: fields.bytes[reason], as: UTF8.self) }

    /// Informational (1xx): another head follows on the same exchange.
    public var isInformational: Bool { status < 200 }

    /// Whether the origin keeps its connection after this response (RFC 9112 §9.3).
    public var keepAlive: Bool {
        let tokens = fields.tokens("connection")
        if tokens.contains("close") { return false }
        return minorVersion >= 1 || tokens.contains("keep-alive")
    }

    /// How the body is delimited (RFC 9112 §6.3): none for HEAD, 1xx, 204 and 304;
    /// chunked when that is the last coding; else Content-Length; else until the origin closes.
    public func bodyFraming(requestMethod: String) throws(ProxyError) -> BodyFraming {
        if requestMethod == "HEAD" || status < 200 || status == 204 || status == 304 { return .length(0) }
        let codings = fields.tokens("transfer-encoding")
        if !codings.isEmpty { return codings.last == "chunked" ? .chunked : .untilClose }
        let lengths = fields.all("content-length")
        guard !lengths.isEmpty else { return .untilClose }
        guard let length = BodyFraming.contentLength(lengths) else { throw .badContentLength }
        return .length(length)
    }
}
