/// The type of a configuration value (SPEC §8).
public enum ValueKind: Equatable, Sendable {
    case string
    case integer
    /// `800ms`, `30s`, `5m`, `6h`, `1d` (and sums such as `1h30m`); a bare number is seconds.
    case duration
    case boolean
    /// Comma-separated.
    case list
    /// One of a fixed set of words, compared ignoring ASCII case.
    case choice([String])
    /// A string or list whose items must have a given form (checked when read).
    case formatted(ValueFormat, list: Bool)

    var name: String {
        switch self {
        case .string: return "string"
        case .integer: return "integer"
        case .duration: return "duration"
        case .boolean: return "boolean"
        case .list: return "list"
        case .choice(let words): return words.joined(separator: "|")
        case .formatted(let format, let list): return list ? "list of \(format.name)" : format.name
        }
    }
}

/// One configuration key: its type, default, where it may appear and whether `SIGHUP`
/// reloads it. The table in `ConfigKey+Table.swift` is the contract the README lists.
public struct ConfigKey: Sendable {
    public let name: String
    public let kind: ValueKind
    /// The default as written in a config file; "" for none.
    public let defaultText: String
    public let reloadable: Bool
    /// Allowed inside `[profile NAME]` sections.
    public let perProfile: Bool
    /// Allowed at the top level.
    public let global: Bool
    public let help: String

    init(_ name: String, _ kind: ValueKind, _ defaultText: String, reload: Bool = true,
         scope: Scope = .global, _ help: String) {
        self.name = name
        self.kind = kind
        self.defaultText = defaultText
        reloadable = reload
        perProfile = scope != .global
        global = scope != .profile
        self.help = help
    }

    enum Scope { case global, profile, both }

    /// The flag spelling: `rate_limit` ↔ `--rate-limit`.
    public var flag: String { "--" + name.replacingUnderscores() }

    public static func named(_ name: String) -> ConfigKey? { all.first { $0.name == name } }

    var isList: Bool {
        if case .formatted(_, let list) = kind { return list }
        return kind == .list
    }

    public static func flagNamed(_ flag: String) -> ConfigKey? { all.first { $0.flag == flag } }
}

extension String {
    func replacingUnderscores() -> String { String(map { $0 == "_" ? "-" : $0 }) }
}
