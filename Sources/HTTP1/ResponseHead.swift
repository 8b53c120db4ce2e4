/// A response head (RFC 9112 §4): status and reason phrase from the status line, and the
/// fields. Parsed once the whole head is in (`HeadScanner`). Pure, immutable.
public struct ResponseHead: Sendable {
    public let fields: HeaderFields
    /// Three digits, 100–999 (RFC 9110 §15: a recipient treats an unknown code as its class).
    public let status: Int
    /// HTTP/1.`minorVersion`.
    public let minorVersion: Int
    /// Where the reason phrase lies in `fields.bytes` (may be empty).
    public let reason: Range<Int>

    /// - Throws: `.malformedStatusLine` unless the first line reads `HTTP/1.d SP 3DIGIT
    ///   [SP reason-phrase]`, the phrase of HTAB, SP, visible ASCII and obs-text;
    ///   `.statusOutOfRange` below 100; then a field line's error (`HeaderFields`).
    public init(_ bytes: [UInt8]) throws(HTTP1Error) {
        guard let (line, next) = HeaderFields.firstLine(of: bytes) else { throw .incompleteHead }
        let start = line.lowerBound
        guard line.count >= 12, let minor = RequestHead.minorVersion(bytes[start..<start + 8]),
            bytes[start + 8] == 0x20,
            line.count == 12 || bytes[start + 12] == 0x20,
            bytes[min(start + 13, line.upperBound)..<line.upperBound].allSatisfy({
                $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F)
            })
        else { throw .malformedStatusLine(HTTPSyntax.printable(bytes[line])) }
        var status = 0
        for byte in bytes[(start + 9)..<(start + 12)] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else {
                throw .malformedStatusLine(HTTPSyntax.printable(bytes[line]))
            }
            status = status * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard status >= 100 else { throw .statusOutOfRange(status) }
        fields = try HeaderFields(bytes, startLine: line, fieldsFrom: next)
        self.status = status
        minorVersion = minor
        reason = min(start + 13, line.upperBound)..<line.upperBound
    }

    public var reasonPhrase: String { String(decoding: fields.bytes[reason], as: UTF8.self) }

    /// Informational (1xx): the final response follows on the same exchange (RFC 9110 §15.2).
    public var isInformational: Bool { status < 200 }

    /// Whether the server keeps the connection after this response (§9.3): HTTP/1.1
    /// unless it lists `close`; HTTP/1.0 only when it lists `keep-alive`. Whether the body's
    /// end can be told (`BodyFraming`) is the caller's to add.
    public var keepAlive: Bool {
        let (close, keepAlive) = fields.persistenceTokens(alsoIn: nil)
        return !close && (minorVersion >= 1 || keepAlive)
    }
}
