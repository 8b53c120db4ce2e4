/// Where a key may be written.
public enum KeyScope: Sendable {
    /// At the top level only.
    case global
    /// Inside `[profile NAME]` sections only.
    case profile
    /// Both: at the top level for every profile, in a section for one.
    case both
}

/// One configuration key, declared once with its type, its default, where it may appear
/// and whether `SIGHUP` applies a change without a restart. Read with
/// `settings[Key.rateLimit]`, so a misspelt key does not compile. Every key is also a flag
/// spelt with dashes (`rate_limit` ↔ `--rate-limit`).
public struct ConfigKey<Value: Sendable>: Sendable {
    public let name: String
    public let type: ValueType<Value>
    /// The default as a configuration file would write it; "" for none.
    public let defaultText: String
    /// The default, parsed once.
    public let defaultValue: Value
    public let reloadable: Bool
    public let scope: KeyScope
    /// One line for `--help` and the documentation.
    public let help: String

    /// Traps when `defaultText` does not parse as `type`: a programming error that the
    /// first test listing the key table finds.
    public init(
        _ name: String, _ type: ValueType<Value>, default defaultText: String = "", reload: Bool,
        scope: KeyScope = .global, _ help: String
    ) {
        guard case .success(let value) = type.parse(defaultText) else {
            preconditionFailure("config key \(name): default \"\(defaultText)\" is not a \(type.name)")
        }
        self.name = name
        self.type = type
        self.defaultText = defaultText
        defaultValue = value
        reloadable = reload
        self.scope = scope
        self.help = help
    }

    /// The flag spelling: `rate_limit` ↔ `--rate-limit`.
    public var flag: String { AnyConfigKey.flag(for: name) }

    /// The key without its value type, for the parser's table and the documentation.
    public var erased: AnyConfigKey {
        let type = type
        return AnyConfigKey(
            name: name, typeName: type.name, defaultText: defaultText, reloadable: reloadable, scope: scope,
            help: help, isBoolean: type.isBoolean,
            check: { text in
                if case .failure(let problem) = type.parse(text) { return problem }
                return nil
            })
    }
}

/// A key as the parser and the documentation see it: name, rules and a check of a value's
/// form, without the value's type.
public struct AnyConfigKey: Sendable {
    public let name: String
    public let typeName: String
    public let defaultText: String
    public let reloadable: Bool
    public let scope: KeyScope
    public let help: String
    public let isBoolean: Bool
    let check: @Sendable (String) -> ConfigProblem?

    public var flag: String { Self.flag(for: name) }
    /// Allowed at the top level.
    public var global: Bool { scope != .profile }
    /// Allowed inside `[profile NAME]` sections.
    public var perProfile: Bool { scope != .global }

    static func flag(for name: String) -> String { "--" + String(name.map { $0 == "_" ? "-" : $0 }) }
}

/// The keys a configuration accepts: one table, so the parser, the flags and the
/// documentation test all read the same declarations.
public struct ConfigSchema: Sendable {
    public let keys: [AnyConfigKey]
    private let byName: [String: Int]
    private let byFlag: [String: Int]

    /// Traps on a name declared twice (a programming error).
    public init(_ keys: [AnyConfigKey]) {
        self.keys = keys
        var byName: [String: Int] = [:]
        var byFlag: [String: Int] = [:]
        for (index, key) in keys.enumerated() {
            precondition(byName.updateValue(index, forKey: key.name) == nil, "config key \(key.name) declared twice")
            byFlag[key.flag] = index
        }
        self.byName = byName
        self.byFlag = byFlag
    }

    public func named(_ name: String) -> AnyConfigKey? { byName[name].map { keys[$0] } }
    public func flagNamed(_ flag: String) -> AnyConfigKey? { byFlag[flag].map { keys[$0] } }
}
