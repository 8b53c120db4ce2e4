/// A value and where it came from, so a later check (an address, a zone) can still name
/// the file, line and key.
public struct Setting: Equatable, Sendable {
    public let value: ConfigValue
    public let origin: ConfigError.Origin
}

/// The settings of one scope: the top level or one `[profile NAME]` section.
public struct SettingTable: Equatable, Sendable {
    public private(set) var values: [String: Setting] = [:]

    public init() {}

    public subscript(key: String) -> Setting? { values[key] }

    mutating func set(_ key: String, _ setting: Setting) { values[key] = setting }
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

    /// The value of a top-level key, or its default.
    public func value(_ name: String) -> ConfigValue {
        if let setting = global[name] { return setting.value }
        guard let key = ConfigKey.named(name) else { preconditionFailure("no config key \(name)") }
        guard !key.defaultText.isEmpty else { return key.isList ? .list([]) : .string("") }
        switch ConfigValue.parse(key.defaultText, as: key.kind) {
        case .success(let value): return value
        case .failure: preconditionFailure("bad default for \(name)")
        }
    }

    public func string(_ name: String) -> String {
        if case .string(let text) = value(name) { return text }
        return ""
    }

    public func list(_ name: String) -> [String] {
        if case .list(let items) = value(name) { return items }
        return []
    }

    public func boolean(_ name: String) -> Bool {
        if case .boolean(let flag) = value(name) { return flag }
        return false
    }

    public func integer(_ name: String) -> Int {
        if case .integer(let number) = value(name) { return number }
        return 0
    }

    /// Milliseconds.
    public func duration(_ name: String) -> Int64 {
        if case .duration(let milliseconds) = value(name) { return milliseconds }
        return 0
    }

    /// Where a top-level key was set, for errors found after parsing.
    public func origin(_ name: String) -> ConfigError.Origin? { global[name]?.origin }

    /// Applies `--flag[=value]` for a configuration key. `value` is nil for a bare
    /// boolean flag, which means true.
    public mutating func applyFlag(_ flag: String, value: String?) throws(ConfigError) {
        guard let key = ConfigKey.flagNamed(flag), key.global else {
            throw ConfigError(.flag(flag), key: nil, "unknown flag")
        }
        let text: String
        if let value {
            text = value
        } else if key.kind == .boolean {
            text = "true"
        } else {
            throw ConfigError(.flag(flag), key: key.name, "needs a value")
        }
        switch ConfigValue.parse(text, as: key.kind) {
        case .success(let parsed): global.set(key.name, Setting(value: parsed, origin: .flag(flag)))
        case .failure(let problem): throw ConfigError(.flag(flag), key: key.name, problem.text)
        }
    }
}

extension Settings {
    /// `self` with every top-level value of `overrides` on top (flags over the file).
    public func overridden(by overrides: Settings) -> Settings {
        var merged = self
        for (name, setting) in overrides.global.values { merged.global.set(name, setting) }
        return merged
    }

    /// Describes where a key was set, for an error found after parsing.
    public func error(_ name: String, _ problem: String) -> ConfigError {
        let flag = ConfigKey.named(name)?.flag ?? name
        return ConfigError(origin(name) ?? .flag(flag), key: name, problem)
    }
}
