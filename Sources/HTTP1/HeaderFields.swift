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

    private static func parseFields(_ raw: UnsafeBufferPointer<UInt8>, from start: Int) throws(HTTP1Error) -> [Field] {
        let count = raw.count
        // Count the lines first so that the array is allocated once.
        var lines = 0
        for index in start..<count where raw[index] == 0x0A { lines += 1 }
        var fields: [Field] = []
        fields.reserveCapacity(max(lines - 1, 0))
        var lineStart = start
        var number = 1
        while lineStart < count {
            var lineEnd = lineStart
            while lineEnd < count, raw[lineEnd] != 0x0A { lineEnd += 1 }
            guard lineEnd < count else { break }
            let contentEnd = lineEnd > lineStart && raw[lineEnd - 1] == 0x0D ? lineEnd - 1 : lineEnd
            if contentEnd == lineStart { return fields }  // the empty line ends the head
            fields.append(try field(raw, lineStart..<contentEnd, number: number))
            lineStart = lineEnd + 1
            number += 1
        }
        throw .incompleteHead
    }

    /// One `name: value` line (without its line end).
    private static func field(_ raw: UnsafeBufferPointer<UInt8>, _ line: Range<Int>,
                              number: Int) throws(HTTP1Error) -> Field {
        if HTTPSyntax.isWhitespace(raw[line.lowerBound]) { throw .obsoleteLineFolding(line: number) }
        var colon = line.lowerBound
        while colon < line.upperBound, HTTPSyntax.isTokenByte(raw[colon]) { colon += 1 }
        guard colon > line.lowerBound, colon < line.upperBound, raw[colon] == UInt8(ascii: ":") else {
            throw nameError(raw, line, number: number)
        }
        var valueStart = colon + 1, valueEnd = line.upperBound
        while valueStart < valueEnd, HTTPSyntax.isWhitespace(raw[valueStart]) { valueStart += 1 }
        while valueEnd > valueStart, HTTPSyntax.isWhitespace(raw[valueEnd - 1]) { valueEnd -= 1 }
        for index in valueStart..<valueEnd {
            let byte = raw[index]
            if (byte < 0x20 && byte != 0x09) || byte == 0x7F {
                throw byte == 0x0D ? .bareCarriageReturn(line: number) : .invalidFieldValue(line: number)
            }
        }
        return Field(name: line.lowerBound..<colon, value: valueStart..<valueEnd)
    }

    /// Names what is wrong before the colon, once the quick scan has failed.
    private static func nameError(_ raw: UnsafeBufferPointer<UInt8>, _ line: Range<Int>, number: Int) -> HTTP1Error {
        let colon = raw[line].firstIndex(of: UInt8(ascii: ":"))
        if raw[line.lowerBound..<(colon ?? line.upperBound)].contains(0x0D) { return .bareCarriageReturn(line: number) }
        guard let colon else { return .missingColon(line: number) }
        if colon > line.lowerBound, HTTPSyntax.isWhitespace(raw[colon - 1]) { return .whitespaceBeforeColon(line: number) }
        return .invalidFieldName(line: number)
    }
}
