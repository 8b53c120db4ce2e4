/// Prometheus's text exposition format, version 0.0.4: `# HELP`, `# TYPE`, then one line
/// per sample, label values escaped (backslash, double quote, newline).
public struct Exposition: Sendable {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    public private(set) var text = ""

    public init() {}

    /// Starts a family: its help line and type. Every sample of it must follow.
    public mutating func family(_ name: String, _ kind: Kind, _ help: String) {
        text += "# HELP \(name) \(Self.escape(help, quotes: false))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    public mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1, quotes: true))\"" }.joined(separator: ",") + "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    public mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Int) {
        sample(name, labels, Double(value))
    }

    /// A sample without labels.
    public mutating func sample(_ name: String, _ value: Int) { sample(name, [], Double(value)) }

    /// A histogram's `_bucket` (cumulative, with `le`), `_sum` and `_count` lines.
    public mutating func histogram(_ name: String, _ labels: [(String, String)], _ histogram: Histogram) {
        let snapshot = histogram.snapshot
        for (bound, count) in zip(histogram.bounds, snapshot.cumulative) {
            sample(name + "_bucket", labels + [("le", Self.format(bound))], count)
        }
        sample(name + "_bucket", labels + [("le", "+Inf")], snapshot.count)
        sample(name + "_sum", labels, snapshot.sumSeconds)
        sample(name + "_count", labels, snapshot.count)
    }

    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    /// A label value (backslash, double quote, newline escaped) or, without `quotes`, a
    /// help text (backslash and newline only), as the text format wants them.
    static func escape(_ value: String, quotes: Bool) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"" where quotes: escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
