/// A JSON value that keeps what tests care about: object keys in order (to compare with
/// Go's struct-order output) and numbers as their literal text (so `3`, `3.0` and `"3"`
/// stay different, as they are to Go's decoder). Parsing follows RFC 8259; writing
/// follows Go's `encoding/json` (compact, `<`, `>`, `&` escaped as `\u003c` …).
public indirect enum TestJSON: Sendable, Equatable, CustomStringConvertible {
    case null
    case bool(Bool)
    /// The number's literal text, e.g. `42`, `-1.5e3`.
    case number(String)
    case string(String)
    case array([TestJSON])
    /// Members in order; a repeated key appears twice (lookups take the last, like Go).
    case object([Member])

    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: TestJSON

        public init(_ key: String, _ value: TestJSON) {
            self.key = key
            self.value = value
        }
    }

    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let message: String
        public let offset: Int
        public var description: String { "JSON: \(message) at byte \(offset)" }
    }

    /// Parses a whole document: one value with only whitespace around it.
    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> TestJSON {
        var reader = JSONReader(bytes: bytes)
        let value = try reader.readDocumentValue()
        reader.skipWhitespace()
        guard reader.atEnd else { throw reader.failure("unexpected text after the value") }
        return value
    }

    public static func parse(_ text: String) throws(ParseError) -> TestJSON { try parse(Array(text.utf8)) }

    /// Parses the first value and ignores what follows it, like Go's `json.Decoder.Decode`
    /// on a request body. Empty input is an error (Go's `EOF`).
    public static func parseFirst(_ bytes: [UInt8]) throws(ParseError) -> TestJSON {
        var reader = JSONReader(bytes: bytes)
        return try reader.readDocumentValue()
    }

    /// An object built from ordered pairs.
    public static func object(_ pairs: [(String, TestJSON)]) -> TestJSON {
        .object(pairs.map { Member($0.0, $0.1) })
    }

    /// `{}`.
    public static var emptyObject: TestJSON { .object([Member]()) }

    // MARK: Access for assertions

    /// The member `key` of an object (the last one when repeated); nil otherwise.
    public subscript(key: String) -> TestJSON? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }

    public subscript(index: Int) -> TestJSON? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }

    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value of an integer literal (no fraction, no exponent) that fits an Int.
    public var int: Int? {
        guard case .number(let text) = self, !text.contains("."), !text.contains("e"), !text.contains("E") else {
            return nil
        }
        return Int(text)
    }

    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var array: [TestJSON]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// An object's keys, in order.
    public var keys: [String]? {
        if case .object(let members) = self { return members.map(\.key) }
        return nil
    }

    /// An object's members, in order.
    public var members: [Member]? {
        if case .object(let members) = self { return members }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// The compact text, as Go's encoder writes it.
    public var description: String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): Self.writeString(text, to: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                Self.writeString(member.key, to: &out)
                out += ":"
                member.value.write(to: &out)
            }
            out += "}"
        }
    }

    /// Go's string escaping, HTML-safe (`encoding/json` encodeState.string).
    static func writeString(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<", ">", "&", "\u{2028}", "\u{2029}":
                out += "\\u" + hex4(scalar.value)
            default:
                if scalar.value < 0x20 {
                    out += "\\u" + hex4(scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

extension TestJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(String(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: TestJSON...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
}

/// Four lowercase hex digits, as in Go's `\u00XX` escapes.
private func hex4(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
