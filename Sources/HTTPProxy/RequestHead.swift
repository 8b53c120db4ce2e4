/// A request head as a client sent it (RFC 9112 §3): the request line taken apart and the
/// fields. Parsed once the whole head is in (`HTTPSyntax.headEnd`); the 16 KiB limit and
/// the 10 s deadline are the connection's business, not this type's.
public struct RequestHead: Sendable {
    public let fields: HeaderFields
    public let method: String
    /// The request target exactly as sent: `host:port` for CONNECT, `http://…` for a proxy
    /// request, `/path` when the client talks to the proxy itself (the PAC file).
    public let target: String
    /// HTTP/1.`minorVersion`.
    public let minorVersion: Int

    /// - Throws: `.malformedRequestLine` unless the line is exactly `METHOD SP target SP
    ///   HTTP/1.d` with a token method and a visible-ASCII target; `.malformedHeader`.
    public init(_ bytes: [UInt8]) throws(ProxyError) {
        fields = try HeaderFields(bytes)
        let line = bytes[fields.startLine]
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3, let methodBytes = parts.first, !methodBytes.isEmpty,
              methodBytes.allSatisfy(HTTPSyntax.isTokenByte), !parts[1].isEmpty,
              parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
              let minor = Self.minorVersion(parts[2]) else {
            throw .malformedRequestLine
        }
        method = String(decoding: methodBytes, as: UTF8.self)
        target = String(decoding: parts[1], as: UTF8.self)
        minorVersion = minor
    }

    /// `HTTP/1.0` → 0, `HTTP/1.1` → 1; nil for anything else.
    static func minorVersion(_ text: ArraySlice<UInt8>) -> Int? {
        guard text.count == 8, text.starts(with: Array("HTTP/1.".utf8)), let last = text.last,
              last >= UInt8(ascii: "0"), last <= UInt8(ascii: "9") else { return nil }
        return Int(last - UInt8(ascii: "0"))
    }

    public var isConnect: Bool { method == "CONNECT" }

    /// Whether the client keeps the connection after this exchange (RFC 9112 §9.3):
    /// HTTP/1.1 unless it says `close`; HTTP/1.0 only when it says `keep-alive`.
    public var keepAlive: Bool {
        let tokens = fields.tokens("connection") + fields.tokens("proxy-connection")
        if tokens.contains("close") { return false }
        return minorVersion >= 1 || tokens.contains("keep-alive")
    }

    /// How the request's body is delimited (RFC 9112 §6.3). Refused: a Transfer-Encoding
    /// whose last coding is not chunked, Transfer-Encoding together with Content-Length
    /// (a smuggling attempt, rejected rather than guessed at), and any Content-Length that
    /// is not one decimal number.
    public func bodyFraming() throws(ProxyError) -> BodyFraming {
        let codings = fields.tokens("transfer-encoding")
        let lengths = fields.all("content-length")
        if !codings.isEmpty {
            guard codings.last == "chunked", lengths.isEmpty else { throw .badTransferEncoding }
            return .chunked
        }
        guard !lengths.isEmpty else { return .length(0) }
        guard let length = BodyFraming.contentLength(lengths) else { throw .badContentLength }
        return .length(length)
    }
}
