/// RFC 8259 parsing for `TestJSON`: strict grammar, invalid UTF-8 in strings replaced by
/// U+FFFD (as Go does), nesting limited to 200 levels.
struct JSONReader {
    let bytes: [UInt8]
    var offset = 0
    var depth = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { offset >= bytes.count }

    func failure(_ message: String) -> TestJSON.ParseError { TestJSON.ParseError(message: message, offset: offset) }

    mutating func skipWhitespace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    mutating func readDocumentValue() throws(TestJSON.ParseError) -> TestJSON {
        skipWhitespace()
        guard !atEnd else { throw failure("unexpected end of input") }
        return try readValue()
    }

    mutating func readValue() throws(TestJSON.ParseError) -> TestJSON {
        skipWhitespace()
        guard offset < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try readObject()
        case UInt8(ascii: "["): return try readArray()
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        default: return .number(try readNumber())
        }
    }

    private mutating func expect(_ word: String) throws(TestJSON.ParseError) {
        let literal = Array(word.utf8)
        guard offset + literal.count <= bytes.count, Array(bytes[offset..<offset + literal.count]) == literal else {
            throw failure("invalid literal")
        }
        offset += literal.count
    }

    private mutating func nest() throws(TestJSON.ParseError) {
        depth += 1
        guard depth <= 200 else { throw failure("nested too deeply") }
    }

    private mutating func readObject() throws(TestJSON.ParseError) -> TestJSON {
        try nest()
        defer { depth -= 1 }
        offset += 1
        var members: [TestJSON.Member] = []
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
            offset += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw failure("expected a key") }
            let key = try readString()
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw failure("expected :") }
            offset += 1
            members.append(TestJSON.Member(key, try readValue()))
            skipWhitespace()
            guard offset < bytes.count else { throw failure("unexpected end of input") }
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            guard bytes[offset] == UInt8(ascii: "}") else { throw failure("expected , or }") }
            offset += 1
            return .object(members)
        }
    }

    private mutating func readArray() throws(TestJSON.ParseError) -> TestJSON {
        try nest()
        defer { depth -= 1 }
        offset += 1
        var items: [TestJSON] = []
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
            offset += 1
            return .array(items)
        }
        while true {
            items.append(try readValue())
            skipWhitespace()
            guard offset < bytes.count else { throw failure("unexpected end of input") }
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            guard bytes[offset] == UInt8(ascii: "]") else { throw failure("expected , or ]") }
            offset += 1
            return .array(items)
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func readNumber() throws(TestJSON.ParseError) -> String {
        let start = offset
        func digits() -> Int {
            let first = offset
            while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1 }
            return offset - first
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        guard offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 else { throw failure("invalid value") }
        if bytes[offset] == UInt8(ascii: "0") { offset += 1 } else { _ = digits() }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw failure("digits expected after .") }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            guard digits() > 0 else { throw failure("digits expected in the exponent") }
        }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    private mutating func readString() throws(TestJSON.ParseError) -> String {
        offset += 1
        var out: [UInt8] = []
        while true {
            guard offset < bytes.count else { throw failure("unterminated string") }
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                offset += 1
                guard offset < bytes.count else { throw failure("unterminated string") }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"): out += Array(String(try readUnicodeEscape()).utf8)
                default: throw failure("invalid escape")
                }
            default:
                guard byte >= 0x20 else { throw failure("control character in string") }
                out.append(byte)
                offset += 1
            }
        }
    }

    /// The scalar after `\u` (offset just past the `u`); a surrogate pair when one follows,
    /// U+FFFD for a lone surrogate.
    private mutating func readUnicodeEscape() throws(TestJSON.ParseError) -> Character {
        let high = try hex4()
        if (0xD800...0xDBFF).contains(high), offset + 6 <= bytes.count, bytes[offset] == UInt8(ascii: "\\"),
            bytes[offset + 1] == UInt8(ascii: "u")
        {
            let saved = offset
            offset += 2
            let low = try hex4()
            if (0xDC00...0xDFFF).contains(low) {
                let value = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                return Character(Unicode.Scalar(value) ?? "\u{FFFD}")
            }
            offset = saved
        }
        return Character(Unicode.Scalar(high) ?? "\u{FFFD}")
    }

    private mutating func hex4() throws(TestJSON.ParseError) -> UInt32 {
        guard offset + 4 <= bytes.count,
            bytes[offset..<offset + 4].allSatisfy({
                ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66)
            }),
            let value = UInt32(String(decoding: bytes[offset..<offset + 4], as: UTF8.self), radix: 16)
        else { throw failure("invalid \\u escape") }
        offset += 4
        return value
    }
}
