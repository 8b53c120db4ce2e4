import Config
import Gateway

/// A command line split into flags and operands. Flags are `--name value`,
/// `--name=value`, or a bare `--name` for booleans; `--` ends the flags.
struct Arguments {
    /// Flags the command itself understands; everything else must be a config key.
    enum Own { case value, boolean }

    private(set) var own: [String: String] = [:]
    private(set) var operands: [String] = []
    private(set) var settings = Settings()

    /// `commandFlags` are the command's own; config-key flags go into `settings` (they
    /// are applied over the config file later, so a flag wins).
    init(_ words: [String], commandFlags: [String: Own]) throws(ConfigError) {
        var index = 0
        var flagsEnded = false
        var configFlags: [(String, String?)] = []
        while index < words.count {
            let word = words[index]
            index += 1
            if flagsEnded || !word.hasPrefix("--") || word == "-" {
                operands.append(word)
                continue
            }
            if word == "--" {
                flagsEnded = true
                continue
            }
            var name = word
            var inline: String?
            if let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                inline = String(word[word.index(after: equals)...])
            }
            let isBoolean: Bool
            if let kind = commandFlags[name] {
                isBoolean = kind == .boolean
            } else if let key = Key.schema.flagNamed(name), key.global {
                isBoolean = key.isBoolean
            } else {
                throw ConfigError(.flag(name), key: nil, "unknown flag")
            }
            var value = inline
            if value == nil {
                let next = index < words.count ? words[index] : nil
                if isBoolean && commandFlags[name] != nil {
                    // The command's own switches (`--json`) take no value.
                } else if isBoolean && (next == nil || next!.hasPrefix("--")) {
                    // A bare configuration boolean at the end or before another flag
                    // means true (`--allow-ip-connect --dns-listen …`).
                } else {
                    // Otherwise a value always follows, so `--block-bypass maybe NAME`
                    // is an error rather than a check of "maybe".
                    guard let next else { throw ConfigError(.flag(name), key: nil, "needs a value") }
                    value = next
                    index += 1
                }
            }
            if let kind = commandFlags[name] {
                if kind == .boolean, let text = value, !Arguments.booleanWords.contains(text.lowercased()) {
                    throw ConfigError(.flag(name), key: nil, "\"\(text)\" is not true or false")
                }
                own[name] = value ?? "true"
            } else {
                configFlags.append((name, value))
            }
        }
        for (flag, value) in configFlags { try settings.applyFlag(flag, value: value, schema: Key.schema) }
    }

    static let booleanWords: Set<String> = ["true", "false", "yes", "no", "on", "off", "1", "0"]

    func flag(_ name: String) -> String? { own[name] }

    func isSet(_ name: String) -> Bool {
        guard let value = own[name] else { return false }
        return ["true", "yes", "on", "1"].contains(value.lowercased())
    }
}

/// The start the commands share: their own flags and `--config`, read into a configuration.
extension Arguments {
    /// `words` read with the command's own `flags` and `--config`; a bad flag is a
    /// configuration error.
    init(command words: [String], flags: [String: Own]) throws(GatewayError) {
        do { try self.init(words, commandFlags: flags.merging(["--config": .value]) { own, _ in own }) } catch {
            throw .config(error)
        }
    }

    /// The configuration: `--config`'s file (or the default's) with the flags over it.
    func configuredSettings() throws(GatewayError) -> Settings {
        try EngineOptions.settings(configFlag: flag("--config"), flags: settings)
    }

    /// Where the state lives, for `settings` read from these arguments.
    func stateDirectory(_ settings: Settings) -> String {
        StateDirectory.path(settings, configFlag: flag("--config"))
    }
}
