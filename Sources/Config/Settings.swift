/// A value's text as written (unquoted) and where it came from, so a later check (an
/// address that must be local, a zone that must exist) can still name file, line and key.
public struct Setting: Equatable, Sendable {
    public let text: String
    public let origin: ConfigError.Origin
}

/// The settings of one scope: the top level or one `[profile NAME]` section. Every text in
/// it was checked against its key's type when read.
public struct SettingTable: Equatable, Sendable {
    public private(set) var values: [String: Setting] = [:]

    public init() {}

    /// The key's value, or its default when the scope does not set it.
    public subscript<Value>(key: ConfigKey<Value>) -> Value {
        guard let setting = values[key.name], case .success(let value) = key.type.parse(setting.text) else {
            return key.defaultValue
        }
        return value
    }

    public func isSet<Value>(_ key: ConfigKey<Value>) -> Bool { values[key.name] != nil }

    /// Where the key was set, for errors found after parsing.
    public func origin<Value>(_ key: ConfigKey<Value>) -> ConfigError.Origin? { values[key.name]?.origin }

    /// Names of the keys this scope sets, sorted.
    public var names: [String] { values.keys.sorted() }

    mutating func set(_ name: String, _ setting: Setting) { values[name] = setting }
}

/// Everything the configuration file and the flags said. Flags win over the file.
public struct Settings: Equatable, Sendable {
    public var global = SettingTable()
    /// Profiles in file order.
    public var profiles: [(name: String, settings: SettingTable)] = []

    public init() {}

    public static func == (lhs: Settings, rhs: Settings) -> Bool {
        lhs.global == rhs.global && lhs.profiles.map(\.name) == rhs.profiles.map(\.name)
            && lhs.profiles.map(\.settings) == rhs.profiles.map(\.settings)
    }

    /// A top-level key's value, or its default.
    public subscript<Value>(key: ConfigKey<Value>) -> Value { global[key] }

    /// Whether the file or a flag set the key at the top level (some defaults depend on
    /// whether the gateway runs from a checkout).
    public func isSet<Value>(_ key: ConfigKey<Value>) -> Bool { global.isSet(key) }

    /// Describes where a top-level key was set, for an error found after parsing.
    public func error<Value>(_ key: ConfigKey<Value>, _ problem: String) -> ConfigError {
        ConfigError(global.origin(key) ?? .flag(key.flag), key: key.name, problem)
    }

    /// Applies `--flag[=value]` for a top-level key of `schema`. `value` is nil for a bare
    /// boolean flag, which means true.
    public mutating func applyFlag(_ flag: String, value: String?, schema: ConfigSchema) throws(ConfigError) {
        guard let key = schema.flagNamed(flag), key.global else {
            throw ConfigError(.flag(flag), key: nil, "unknown flag")
        }
        let text: String
        if let value {
            text = value
        } else if key.isBoolean {
            text = "true"
        } else {
            throw ConfigError(.flag(flag), key: key.name, "needs a value")
        }
        if let problem = key.check(text) { throw ConfigError(.flag(flag), key: key.name, problem.text) }
        global.set(key.name, Setting(text: text, origin: .flag(flag)))
    }

    /// `self` with every top-level value of `overrides` on top (flags over the file).
    public func overridden(by overrides: Settings) -> Settings {
        var merged = self
        for (name, setting) in overrides.global.values { merged.global.set(name, setting) }
        return merged
    }
}
