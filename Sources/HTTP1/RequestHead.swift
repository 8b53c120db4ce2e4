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
        let parts = try Self.requestLine(bytes[line])
        fields = try HeaderFields(bytes, startLine: line, fieldsFrom: next)
        method = String(decoding: bytes[parts.method], as: UTF8.self)
        target = String(decoding: bytes[parts.target], as: UTF8.self)
        minorVersion = parts.minorVersion
    }

    /// Checks a request line (without its line end), as soon as it has arrived and before
    /// the rest of the head: a line that can never become a request (an HTTP/0.9 `GET /`,
    /// which waits for an answer without sending more) is refused at once.
    /// - Throws: `.malformedRequestLine` unless it is exactly `method SP request-target SP
    ///   HTTP-version` with a token method and a visible-ASCII target;
    ///   `.unsupportedVersion` for a well-formed version other than 1.x.
    public static func requestLine(
        _ line: ArraySlice<UInt8>
    ) throws(HTTP1Error) -> (method: Range<Int>, target: Range<Int>, minorVersion: Int) {
        guard let firstSpace = line.firstIndex(of: 0x20), firstSpace > line.startIndex,
            let secondSpace = line[(firstSpace + 1)...].firstIndex(of: 0x20),
            secondSpace > firstSpace + 1,
            line[line.startIndex..<firstSpace].allSatisfy(HTTPSyntax.isTokenByte),
            line[(firstSpace + 1)..<secondSpace].allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { throw .malformedRequestLine }
        let version = line[(secondSpace + 1)...]
        guard let minor = minorVersion(version) else {
            // HTTP-version = "HTTP/" DIGIT "." DIGIT (RFC 9112 §2.3): well-formed but not 1.x.
            let digit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
            let bytes = Array(version)
            if bytes.count == 8, bytes.starts(with: "HTTP/".utf8), digit(bytes[5]), bytes[6] == UInt8(ascii: "."),
                digit(bytes[7])
            {
                throw .unsupportedVersion(String(decoding: bytes, as: UTF8.self))
            }
            throw .malformedRequestLine
        }
        return (line.startIndex..<firstSpace, (firstSpace + 1)..<secondSpace, minor)
    }

    /// Max-Forwards (RFC 9110 §7.6.2): the hops an OPTIONS or TRACE may still take; nil
    /// when absent or not a number.
    public var maxForwards: Int? {
        guard let value = fields.first("Max-Forwards"), !value.isEmpty, value.count <= 9,
            value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        return Int(value)
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
