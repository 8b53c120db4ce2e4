/// How the text of one configuration value becomes a typed value: the type a key is
/// declared with. Parsing happens when the file or a flag is read, so a bad value is an
/// error naming file, line and key there, never when a feature first uses it.
public struct ValueType<Value: Sendable>: Sendable {
    /// What the value is, as the documentation and error messages say it.
    public let name: String
    /// A boolean flag may stand alone (`--allow-ip-connect` means true).
    public let isBoolean: Bool
    let parse: @Sendable (String) -> Result<Value, ConfigProblem>

    public init(
        name: String, isBoolean: Bool = false, parse: @escaping @Sendable (String) -> Result<Value, ConfigProblem>
    ) {
        self.name = name
        self.isBoolean = isBoolean
        self.parse = parse
    }

    /// A value of a given form: `parse` returns nil when `text` does not have it, and the
    /// error says `"text" is not <expected>` (by default `a valid <name>`).
    public static func form(
        _ name: String, expected: String? = nil, _ parse: @escaping @Sendable (String) -> Value?
    )
        -> ValueType
    {
        let expected = expected ?? "a valid \(name)"
        return ValueType(name: name) { text in
            guard let value = parse(text) else { return .failure(ConfigProblem("\"\(text)\" is not \(expected)")) }
            return .success(value)
        }
    }

    /// The same form, comma-separated: `a, b, c` (items trimmed, empty items dropped); the
    /// error names the first bad item.
    public var list: ValueType<[Value]> {
        let item = self
        return ValueType<[Value]>(name: "list of \(name)") { text in
            var values: [Value] = []
            for part in ValueType<String>.splitList(text) {
                switch item.parse(part) {
                case .success(let value): values.append(value)
                case .failure(let problem): return .failure(problem)
                }
            }
            return .success(values)
        }
    }

    /// The same form, or nothing when the text is empty (a key that is off by default).
    public var optional: ValueType<Value?> {
        let item = self
        return ValueType<Value?>(name: name) { text in
            text.isEmpty ? .success(nil) : item.parse(text).map { $0 }
        }
    }
}

/// Why a value is not acceptable; the parser adds file, line and key.
public struct ConfigProblem: Error, Sendable {
    public let text: String
    public init(_ text: String) { self.text = text }
}

extension ValueType where Value == String {
    /// Any text (bare or `"quoted"` in the file).
    public static let string = ValueType(name: "string") { .success($0) }

    /// Comma-separated items, trimmed, empty items dropped.
    static func splitList(_ text: String) -> [String] {
        text.unicodeScalars.split(separator: ",", omittingEmptySubsequences: false)
            .map { String(ConfigFile.trim($0, " \t")) }
            .filter { !$0.isEmpty }
    }
}

extension ValueType where Value == [String] {
    /// Comma-separated names or other free items.
    public static let strings = ValueType<String>.string.list
}

extension ValueType where Value == Int {
    /// A whole number ≥ 0.
    public static let integer = ValueType.form("integer", expected: "a whole number ≥ 0") { text in
        Int(text).flatMap { $0 >= 0 ? $0 : nil }
    }
}

extension ValueType where Value == Bool {
    /// `true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`, any case.
    public static let boolean = ValueType(name: "boolean", isBoolean: true) { text in
        guard let value = parseBoolean(text) else { return .failure(ConfigProblem("\"\(text)\" is not true or false")) }
        return .success(value)
    }

    static func parseBoolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: return nil
        }
    }
}

extension ValueType where Value == Duration {
    /// `800ms`, `30s`, `5m`, `6h`, `1d`, sums such as `1h30m`; a bare number is seconds.
    public static let duration = ValueType.form(
        "duration", expected: "a duration (e.g. 800ms, 30s, 5m, 6h, 1d)"
    ) { text in
        parseDuration(text).map { Duration.milliseconds($0) }
    }

    /// Milliseconds of a duration as the configuration file writes it (also for flags
    /// such as `hits --since 30m`).
    public static func parseDuration(_ text: String) -> Int64? {
        if let seconds = Int64(text), seconds >= 0 {
            return seconds.multipliedReportingOverflow(by: 1000).overflow ? nil : seconds * 1000
        }
        var total: Int64 = 0
        var number: Int64?
        var chars = Array(text.lowercased().utf8)[...]
        guard !chars.isEmpty else { return nil }
        while let byte = chars.first {
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                let (next, overflow) = (number ?? 0).multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                number = next + Int64(byte - UInt8(ascii: "0"))
                chars = chars.dropFirst()
                continue
            }
            guard let value = number else { return nil }
            let unit: Int64
            if chars.starts(with: Array("ms".utf8)) {
                unit = 1
                chars = chars.dropFirst(2)
            } else {
                switch byte {
                case UInt8(ascii: "s"): unit = 1000
                case UInt8(ascii: "m"): unit = 60_000
                case UInt8(ascii: "h"): unit = 3_600_000
                case UInt8(ascii: "d"): unit = 86_400_000
                default: return nil
                }
                chars = chars.dropFirst()
            }
            let (part, overflow) = value.multipliedReportingOverflow(by: unit)
            guard !overflow, total <= Int64.max - part else { return nil }
            total += part
            number = nil
        }
        return number == nil ? total : nil
    }
}

extension ValueType where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
    /// One of an enumeration's raw values, compared ignoring ASCII case.
    public static func choice(_: Value.Type) -> ValueType {
        let words = Value.allCases.map(\.rawValue)
        return ValueType(name: words.joined(separator: "|")) { text in
            guard let value = Value(rawValue: text.lowercased()) else {
                return .failure(ConfigProblem("\"\(text)\" is not one of \(words.joined(separator: ", "))"))
            }
            return .success(value)
        }
    }
}

extension Duration {
    /// Whole milliseconds, saturating; negative durations are 0.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? .max : whole &+ attoseconds / 1_000_000_000_000_000
    }

    /// Whole nanoseconds, saturating; negative durations are 0.
    public var wholeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ UInt64(max(attoseconds, 0) / 1_000_000_000)
    }
}
