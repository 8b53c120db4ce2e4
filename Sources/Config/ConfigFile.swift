import SystemIO

/// The configuration file: `key = value` lines, `#` comments, values bare or `"quoted"`,
/// `[profile NAME]` sections (docs/configuration.md). Unknown keys and bad values are
/// errors naming file, line and key.
public enum ConfigFile {
    public static let defaultPath = "/etc/phosra-gate/phosra-gate.conf"
    /// Each profile is a registration and a policy kept in memory: a bound on both.
    public static let maximumProfiles = 64

    public static func load(_ path: String, schema: ConfigSchema) throws(ConfigError) -> Settings {
        let bytes: [UInt8]
        do {
            bytes = try Files.read(path, limit: 1 << 20)
        } catch {
            throw ConfigError(.file(path: path, line: 0), key: nil, error.reason)
        }
        let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        return try parse(String(decoding: text, as: UTF8.self), path: path, schema: schema)
    }

    public static func parse(_ text: String, path: String, schema: ConfigSchema) throws(ConfigError) -> Settings {
        var settings = Settings()
        var profileIndex: Int?
        var seen: [String: Int] = [:]
        // Split on the scalar, not the Character: "\r\n" is one Character, so a file with
        // CRLF line ends would otherwise be one long line (from its first `#` on, a comment).
        let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        for (offset, rawLine) in lines.enumerated() {
            let number = offset + 1
            let origin = ConfigError.Origin.file(path: path, line: number)
            let line = try stripComment(Substring(rawLine), origin: origin).trimmingCharacters(in: " \t\r")
            if line.isEmpty { continue }
            if line.hasPrefix("[") {
                let name = try sectionName(line, origin: origin)
                guard !settings.profiles.contains(where: { $0.name == name }) else {
                    throw ConfigError(origin, key: nil, "profile \"\(name)\" is defined twice")
                }
                guard settings.profiles.count < maximumProfiles else {
                    throw ConfigError(origin, key: nil, "more than \(maximumProfiles) profiles")
                }
                settings.profiles.append((name, SettingTable()))
                profileIndex = settings.profiles.count - 1
                seen = [:]
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigError(origin, key: nil, "expected `key = value`")
            }
            let name = line[..<equals].trimmingCharacters(in: " \t")
            guard let key = schema.named(name) else { throw ConfigError(origin, key: name, "unknown key") }
            if profileIndex == nil, !key.global {
                throw ConfigError(origin, key: name, "only allowed inside a [profile NAME] section")
            }
            if profileIndex != nil, !key.perProfile {
                throw ConfigError(origin, key: name, "not allowed inside a [profile] section")
            }
            if let first = seen[name] { throw ConfigError(origin, key: name, "set twice (first on line \(first))") }
            seen[name] = number
            let raw = try unquote(
                line[line.index(after: equals)...].trimmingCharacters(in: " \t"), origin: origin, key: name)
            if let problem = key.check(raw) { throw ConfigError(origin, key: name, problem.text) }
            let setting = Setting(text: raw, origin: origin)
            if let index = profileIndex {
                settings.profiles[index].settings.set(name, setting)
            } else {
                settings.global.set(name, setting)
            }
        }
        return settings
    }

    /// Cuts a `#` comment: outside quotes, at the start of the line or after white space
    /// (so `tls://9.9.9.9#dns.quad9.net` keeps its server name).
    private static func stripComment(_ line: Substring, origin: ConfigError.Origin) throws(ConfigError) -> Substring {
        var quoted = false
        var escaped = false
        var previous: Character = " "
        for index in line.indices {
            let character = line[index]
            defer { previous = character }
            if escaped {
                escaped = false
                continue
            }
            if character == "\\" && quoted {
                escaped = true
                continue
            }
            if character == "\"" { quoted.toggle() }
            if character == "#" && !quoted && (previous == " " || previous == "\t") { return line[..<index] }
        }
        if quoted { throw ConfigError(origin, key: nil, "unterminated quote") }
        return line
    }

    private static func sectionName(_ line: String, origin: ConfigError.Origin) throws(ConfigError) -> String {
        guard line.hasSuffix("]") else { throw ConfigError(origin, key: nil, "section header must end with ]") }
        let inner = line.dropFirst().dropLast().trimmingCharacters(in: " \t")
        let parts = inner.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0] == "profile" else {
            throw ConfigError(origin, key: nil, "unknown section [\(inner)] (only [profile NAME])")
        }
        let name = parts[1].trimmingCharacters(in: " \t\"")
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else {
            throw ConfigError(origin, key: nil, "profile name \"\(name)\" may hold only letters, digits, - and _")
        }
        guard name != "none" else {
            throw ConfigError(origin, key: nil, "\"none\" is the unfiltered profile's name; choose another")
        }
        return name
    }

    /// A `"quoted"` value with `\"` and `\\` escapes, or the bare text.
    private static func unquote(_ text: String, origin: ConfigError.Origin, key: String) throws(ConfigError) -> String {
        guard text.hasPrefix("\"") else { return text }
        var result = ""
        var escaped = false
        var rest = text.dropFirst()
        while let character = rest.first {
            rest = rest.dropFirst()
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                guard rest.allSatisfy({ $0 == " " || $0 == "\t" }) else {
                    throw ConfigError(origin, key: key, "text after a closing quote")
                }
                return result
            } else {
                result.append(character)
            }
        }
        throw ConfigError(origin, key: key, "unterminated quote")
    }
}
