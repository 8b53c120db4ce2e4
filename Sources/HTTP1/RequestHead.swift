/// A request head as a client sent it (RFC 9112 §3): the request line taken apart, and the
/// fields. Parsed once the whole head is in (`HeadScanner` finds its end and enforces the
/// size limit; deadlines are the caller's business). Pure, immutable.
public struct RequestHead: Sendable {
    public let fields: HeaderFields
    public let method: String
    /// The request target exactly as sent: `host:port` for CONNECT (authority-form),
    /// `http://…` to a proxy (absolute-form), `/path` to a server (origin-form), §3.2.
    public let target: String
    /// HTTP/1.`minorVersion`; any digit is accepted (§2.3: a higher minor version is read
    /// as the highest one understood).
    public let minorVersion: Int

    /// - Throws: `.malformedRequestLine` unless the first line is exactly `method SP
    ///   request-target SP HTTP/1.d` with a token method and a visible-ASCII target; then
    ///   a field line's error (`HeaderFields`).
    public init(_ bytes: [UInt8]) throws(HTTP1Error) {
        guard let (line, next) = HeaderFields.firstLine(of: bytes) else { throw .incompleteHead }
        guard let firstSpace = bytes[line].firstIndex(of: 0x20), firstSpace > line.lowerBound,
            let secondSpace = bytes[(firstSpace + 1)..<line.upperBound].firstIndex(of: 0x20),
            secondSpace > firstSpace + 1,
            bytes[line.lowerBound..<firstSpace].allSatisfy(HTTPSyntax.isTokenByte),
            bytes[(firstSpace + 1)..<secondSpace].allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
            let minor = Self.minorVersion(bytes[(secondSpace + 1)..<line.upperBound])
        else { throw .malformedRequestLine }
        fields = try HeaderFields(bytes, startLine: line, fieldsFrom: next)
        method = String(decoding: bytes[line.lowerBound..<firstSpace], as: UTF8.self)
        target = String(decoding: bytes[(firstSpace + 1)..<secondSpace], as: UTF8.self)
        minorVersion = minor
    }

    /// `HTTP/1.0` → 0, `HTTP/1.1` → 1; nil for anything else (HTTP-version is case-sensitive, §2.3).
    static func minorVersion(_ text: ArraySlice<UInt8>) -> Int? {
        guard text.count == 8, text.starts(with: "HTTP/1.".utf8), let last = text.last,
            last >= UInt8(ascii: "0"), last <= UInt8(ascii: "9")
        else { return nil }
        return Int(last - UInt8(ascii: "0"))
    }

    public var isConnect: Bool { method == "CONNECT" }

    /// Whether the client keeps the connection after this exchange (§9.3): HTTP/1.1 unless
    /// it lists `close`; HTTP/1.0 only when it lists `keep-alive`. `Proxy-Connection`,
    /// which older clients send to a proxy instead of `Connection` (in no RFC), counts too.
    public var keepAlive: Bool {
        let (close, keepAlive) = fields.persistenceTokens(alsoIn: "proxy-connection")
        return !close && (minorVersion >= 1 || keepAlive)
    }
}
