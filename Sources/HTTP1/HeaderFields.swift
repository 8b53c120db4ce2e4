/// A received head kept as its bytes plus where each field's name and value lie (RFC 9112
/// §5): nothing becomes a `String` unless asked for, lookups compare bytes, and a proxy
/// forwards fields byte for byte, so obs-text in a value survives untouched. Immutable and
/// `Sendable`; made by `RequestHead` and `ResponseHead`, which check the start line.
///
/// Each field line is checked when the head is parsed, cheapest check first: obsolete line
/// folding (§5.2), a missing colon, white space before the colon (§5.1), a name that is not
/// a token, a bare CR (§2.2) or another control character in the value (RFC 9110 §5.5).
/// Values lose their leading and trailing white space (OWS). Never traps on any input.
public struct HeaderFields: Sendable {
    /// Where one field's name and (trimmed) value lie in `bytes`.
    public struct Field: Sendable, Equatable {
        public let name: Range<Int>
        public let value: Range<Int>
    }

    /// The whole head: start line, field lines and the empty line.
    public let bytes: [UInt8]
    /// The start line, without its line end.
    public let startLine: Range<Int>
    /// The fields in the order received.
    public let fields: [Field]

    /// Parses every field line of `bytes` (a complete head, as `HeadScanner` delimits it);
    /// the start line is taken as it is. Bytes after the empty line are not looked at.
    /// - Throws: `.incompleteHead` without the empty line; a field line's error.
    public init(_ bytes: [UInt8]) throws(HTTP1Error) {
        guard let (line, next) = Self.firstLine(of: bytes) else { throw .incompleteHead }
        try self.init(bytes, startLine: line, fieldsFrom: next)
    }

    init(_ bytes: [UInt8], startLine: Range<Int>, fieldsFrom start: Int) throws(HTTP1Error) {
        self.bytes = bytes
        self.startLine = startLine
        fields = try bytes.withUnsafeBufferPointer { raw throws(HTTP1Error) in try Self.parseFields(raw, from: start) }
    }

    /// The first line without its line end, and where the next begins; nil without an LF.
    static func firstLine(of bytes: [UInt8]) -> (Range<Int>, Int)? {
        guard let newline = bytes.firstIndex(of: 0x0A) else { return nil }
        let end = newline > 0 && bytes[newline - 1] == 0x0D ? newline - 1 : newline
        return (0..<end, newline + 1)
    }

    /// One pass over the field lines: each byte is looked at once (the line end is found
    /// while the value is checked), and nothing is allocated but the array of fields.
    private static func parseFields(_ raw: UnsafeBufferPointer<UInt8>, from start: Int) throws(HTTP1Error) -> [Field] {
        let count = raw.count
        var fields: [Field] = []
        fields.reserveCapacity(16)
        var index = start
        var number = 1
        while index < count {
            let lineStart = index
            let first = raw[index]
            if first == 0x0A || (first == 0x0D && index + 1 < count && raw[index + 1] == 0x0A) {
                return fields  // the empty line ends the head
            }
            if HTTPSyntax.isWhitespace(first) { throw .obsoleteLineFolding(line: number) }
            var colon = index
            while colon < count, HTTPSyntax.isTokenByte(raw[colon]) { colon += 1 }
            guard colon > lineStart, colon < count, raw[colon] == UInt8(ascii: ":") else {
                throw nameError(raw, from: lineStart, number: number)
            }
            var valueStart = colon + 1
            while valueStart < count, HTTPSyntax.isWhitespace(raw[valueStart]) { valueStart += 1 }
            // The value runs to the line end: CRLF or a bare LF. HTAB, SP, visible ASCII and
            // obs-text are allowed (RFC 9110 §5.5); a CR elsewhere is bare (RFC 9112 §2.2).
            var end = valueStart
            var next = 0
            while true {
                guard end < count else { throw .incompleteHead }
                let byte = raw[end]
                if (byte >= 0x20 && byte != 0x7F) || byte == 0x09 {
                    end += 1
                } else if byte == 0x0A {
                    next = end + 1
                    break
                } else if byte == 0x0D, end + 1 < count, raw[end + 1] == 0x0A {
                    next = end + 2
                    break
                } else {
                    throw byte == 0x0D ? .bareCarriageReturn(line: number) : .invalidFieldValue(line: number)
                }
            }
            while end > valueStart, HTTPSyntax.isWhitespace(raw[end - 1]) { end -= 1 }
            fields.append(Field(name: lineStart..<colon, value: valueStart..<end))
            index = next
            number += 1
        }
        throw .incompleteHead
    }

    /// Names what is wrong before the colon, once the quick scan has failed.
    private static func nameError(_ raw: UnsafeBufferPointer<UInt8>, from lineStart: Int, number: Int) -> HTTP1Error {
        var lineEnd = lineStart
        while lineEnd < raw.count, raw[lineEnd] != 0x0A { lineEnd += 1 }
        if lineEnd > lineStart, raw[lineEnd - 1] == 0x0D { lineEnd -= 1 }
        let line = lineStart..<lineEnd
        let colon = raw[line].firstIndex(of: UInt8(ascii: ":"))
        if raw[line.lowerBound..<(colon ?? line.upperBound)].contains(0x0D) { return .bareCarriageReturn(line: number) }
        guard let colon else { return .missingColon(line: number) }
        if colon > line.lowerBound, HTTPSyntax.isWhitespace(raw[colon - 1]) {
            return .whitespaceBeforeColon(line: number)
        }
        return .invalidFieldName(line: number)
    }
}
