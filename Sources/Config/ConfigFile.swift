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
        for (offset, rawLine) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
            .enumerated()
        {
            let number = offset + 1
            let origin = ConfigError.Origin.file(path: path, line: number)
            let line = trim(try stripComment(rawLine, origin: origin), " \t\r")
            if line.isEmpty { continue }
            if line.first == "[" {
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
            let name = String(trim(line[..<equals], " \t"))
            guard let key = schema.named(name) else { throw ConfigError(origin, key: name, "unknown key") }
            if profileIndex == nil, !key.global {
                throw ConfigError(origin, key: name, "only allowed inside a [profile NAME] section")
            }
            if profileIndex != nil, !key.perProfile {
                throw ConfigError(origin, key: name, "not allowed inside a [profile] section")
            }
            if let first = seen[name] { throw ConfigError(origin, key: name, "set twice (first on line \(first))") }
            seen[name] = number
            let raw = try unquote(trim(line[line.index(after: equals)...], " \t"), origin: origin, key: name)
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

    // The file is read scalar by scalar, not by Character: "\r\n" is one Character, and so
    // is a quote or a backslash with a combining mark after it or a prepended mark (U+070F)
    // before it; read as Characters, a CRLF file was one line and such a quote did not count.
    typealias Scalars = Substring.UnicodeScalarView

    static func trim(_ text: Scalars, _ set: String) -> Scalars {
        let drop = Set(set.unicodeScalars)
        guard let first = text.firstIndex(where: { !drop.contains($0) }),
            let last = text.lastIndex(where: { !drop.contains($0) })
        else { return text[text.endIndex...] }
        return text[first...last]
    }

    /// Cuts a `#` comment: outside quotes, at the start of the line or after white space
    /// (so `tls://9.9.9.9#dns.quad9.net` keeps its server name).
    private static func stripComment(_ line: Scalars, origin: ConfigError.Origin) throws(ConfigError) -> Scalars {
        var quoted = false
        var escaped = false
        var previous: Unicode.Scalar = " "
        for index in line.indices {
            let scalar = line[index]
            defer { previous = scalar }
            if escaped {
                escaped = false
                continue
            }
            if scalar == "\\" && quoted {
                escaped = true
                continue
            }
            if scalar == "\"" { quoted.toggle() }
            if scalar == "#" && !quoted && (previous == " " || previous == "\t") { return line[..<index] }
        }
        if quoted { throw ConfigError(origin, key: nil, "unterminated quote") }
        return line
    }

    private static func sectionName(_ line: Scalars, origin: ConfigError.Origin) throws(ConfigError) -> String {
        guard line.last == "]" else { throw ConfigError(origin, key: nil, "section header must end with ]") }
        let inner = trim(line.dropFirst().dropLast(), " \t")
        let parts = inner.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, String(parts[0]) == "profile" else {
            throw ConfigError(origin, key: nil, "unknown section [\(String(inner))] (only [profile NAME])")
        }
        let name = String(trim(parts[1], " \t\""))
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
    private static func unquote(_ text: Scalars, origin: ConfigError.Origin, key: String) throws(ConfigError) -> String
    {
        guard text.first == "\"" else { return String(text) }
        var result = String.UnicodeScalarView()
        var escaped = false
        var rest = text.dropFirst()
        while let scalar = rest.first {
            rest = rest.dropFirst()
            if escaped {
                result.append(scalar)
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else if scalar == "\"" {
                guard rest.allSatisfy({ $0 == " " || $0 == "\t" }) else {
                    throw ConfigError(origin, key: key, "text after a closing quote")
                }
                return String(result)
            } else {
                result.append(scalar)
            }
        }
        throw ConfigError(origin, key: key, "unterminated quote")
    }
}
