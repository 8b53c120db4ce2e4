/// A typed configuration value, checked against its key's `ValueKind`.
public enum ConfigValue: Equatable, Sendable {
    case string(String)
    case integer(Int)
    /// Milliseconds.
    case duration(Int64)
    case boolean(Bool)
    case list([String])

    /// Parses `text` (already unquoted) as `kind`; the error text says what was expected.
    static func parse(_ text: String, as kind: ValueKind) -> Result<ConfigValue, ConfigProblem> {
        switch kind {
        case .string:
            return .success(.string(text))
        case .integer:
            guard let value = Int(text), value >= 0 else { return .failure(.init("\"\(text)\" is not a whole number ≥ 0")) }
            return .success(.integer(value))
        case .duration:
            guard let value = parseDuration(text) else {
                return .failure(.init("\"\(text)\" is not a duration (e.g. 800ms, 30s, 5m, 6h, 1d)"))
            }
            return .success(.duration(value))
        case .boolean:
            guard let value = parseBoolean(text) else { return .failure(.init("\"\(text)\" is not true or false")) }
            return .success(.boolean(value))
        case .list:
            return .success(.list(splitList(text)))
        case .formatted(let format, let list):
            let items = list ? splitList(text) : [text]
            if let problem = items.lazy.compactMap(format.problem).first { return .failure(.init(problem)) }
            return .success(list ? .list(items) : .string(text))
        case .choice(let words):
            let lowered = text.lowercased()
            guard words.contains(lowered) else {
                return .failure(.init("\"\(text)\" is not one of \(words.joined(separator: ", "))"))
            }
            return .success(.string(lowered))
        }
    }

    static func parseBoolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: return nil
        }
    }

    /// Milliseconds of a duration written as in the configuration file (`30m`, `7d`).
    public static func duration(_ text: String) -> Int64? { parseDuration(text) }

    /// `800ms`, `30s`, `5m`, `6h`, `1d`, sums like `1h30m`, or bare seconds.
    static func parseDuration(_ text: String) -> Int64? {
        if let seconds = Int64(text), seconds >= 0 { return seconds.multipliedReportingOverflow(by: 1000).overflow ? nil : seconds * 1000 }
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

    /// Comma-separated items, trimmed, empty items dropped.
    static func splitList(_ text: String) -> [String] {
        text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: " \t") }
            .filter { !$0.isEmpty }
    }
}

/// Why a value is not acceptable; the parser adds file, line and key.
struct ConfigProblem: Error {
    let text: String
    init(_ text: String) { self.text = text }
}

extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        let drop = Set(set)
        guard let first = firstIndex(where: { !drop.contains($0) }) else { return "" }
        let last = lastIndex(where: { !drop.contains($0) })!
        return String(self[first...last])
    }
}
