import Config
import DomainMatch
import Policy

/// The configuration file format (`ConfigFile.parse`), with a schema holding a key of every
/// value type and scope the gateway uses (its own table lives in Gateway, which this module
/// does not link).
enum ConfigTarget {
    static let target = FuzzTarget(
        "config",
        "a rejection names the file and a line that exists (holding the key it names); an accepted file's "
            + "settings name their own lines, write back to a file that parses to the same settings, and "
            + "CRLF line ends read as LF"
    ) { input throws(PropertyViolation) in
        let text = String(decoding: input, as: UTF8.self)
        let lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        let outcome = parse(text)
        switch outcome {
        case .failure(let error):
            try errorNamesALine(error, lines)
        case .success(let settings):
            try settingsNameTheirLines(settings, lines)
            let written = write(settings)
            guard case .success(let again) = parse(written) else {
                throw PropertyViolation(problem: "settings written back do not parse: \(parse(written))")
            }
            try check(texts(again) == texts(settings), "settings written back read differently")
        }
        if !input.contains(0x0D) {
            let crlf = parse(
                String(
                    decoding: Array(
                        input.split(separator: 0x0A, omittingEmptySubsequences: false)
                            .joined(separator: [0x0D, 0x0A])), as: UTF8.self))
            try check(same(crlf, outcome), "with CRLF line ends: \(crlf); with LF: \(outcome)")
        }
    }

    static let path = "fuzz.conf"

    static func parse(_ text: String) -> Result<Settings, ConfigError> {
        Result { () throws(ConfigError) in try ConfigFile.parse(text, path: path, schema: schema) }
    }

    static func errorNamesALine(_ error: ConfigError, _ lines: [[UInt8]]) throws(PropertyViolation) {
        guard case .file(let file, let line) = error.origin, file == path else {
            throw PropertyViolation(problem: "\(error) does not name the file")
        }
        try check((1...lines.count).contains(line), "\(error) names line \(line) of \(lines.count)")
        try check(!error.problem.isEmpty, "\(error) has no problem text")
        if let key = error.key {
            try check(contains(lines[line - 1], key), "\(error): line \(line) does not hold the key")
        }
    }

    static func settingsNameTheirLines(_ settings: Settings, _ lines: [[UInt8]]) throws(PropertyViolation) {
        for table in [settings.global] + settings.profiles.map(\.settings) {
            for (name, setting) in table.values {
                guard case .file(_, let line) = setting.origin, (1...lines.count).contains(line) else {
                    throw PropertyViolation(problem: "\(name) comes from \(setting.origin)")
                }
                try check(contains(lines[line - 1], name), "\(name) is said to be on line \(line), which lacks it")
            }
        }
    }

    static func contains(_ line: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard !needle.isEmpty, needle.count <= line.count else { return needle.isEmpty }
        return (0...(line.count - needle.count)).contains { line[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// The file a tool would write for these settings: every value quoted and escaped.
    static func write(_ settings: Settings) -> String {
        func lines(_ table: SettingTable) -> String {
            table.names.map { name in
                var quoted = "\""
                for scalar in table.values[name]!.text.unicodeScalars {
                    if scalar == "\"" || scalar == "\\" { quoted.unicodeScalars.append("\\") }
                    quoted.unicodeScalars.append(scalar)
                }
                return "\(name) = \(quoted)\"\n"
            }.joined()
        }
        return lines(settings.global) + settings.profiles.map { "[profile \($0.name)]\n" + lines($0.settings) }.joined()
    }

    /// Names and texts, scope by scope; where they were written is left out.
    static func texts(_ settings: Settings) -> [[String: String]] {
        ([settings.global] + settings.profiles.map(\.settings)).map { $0.values.mapValues(\.text) }
            + [
                Dictionary(
                    uniqueKeysWithValues: settings.profiles.enumerated().map { ("\($0.offset)", $0.element.name) })
            ]
    }

    static func same(_ a: Result<Settings, ConfigError>, _ b: Result<Settings, ConfigError>) -> Bool {
        switch (a, b) {
        case (.success(let x), .success(let y)): texts(x) == texts(y)
        case (.failure(let x), .failure(let y)): x.origin == y.origin && x.key == y.key && x.problem == y.problem
        default: false
        }
    }

    enum Mode: String, CaseIterable, Sendable { case keyvalue, json }

    static let listen = ValueType<ListenAddress>.form("ADDR:PORT") { ListenAddress($0) }

    static let schema = ConfigSchema([
        ConfigKey("name", .string, reload: true, "text").erased,
        ConfigKey("names", .strings, reload: true, "a list of text").erased,
        ConfigKey("enabled", .boolean, default: "true", reload: true, "a boolean").erased,
        ConfigKey("limit", .integer, default: "1000", reload: true, "a whole number").erased,
        ConfigKey("ttl", .duration, default: "10s", reload: false, "a duration").erased,
        ConfigKey("mode", .choice(Mode.self), default: "keyvalue", reload: false, "a choice").erased,
        ConfigKey("listen", listen.list, default: "127.0.0.1:53", reload: false, "listen addresses").erased,
        ConfigKey("metrics", listen.optional, reload: false, "off when empty").erased,
        ConfigKey(
            "clients", ValueType<AddressRange>.form("CIDR") { AddressRange($0) }.list, reload: true,
            scope: .profile, "a profile's clients"
        ).erased,
        ConfigKey("policy", .string, reload: false, scope: .both, "both scopes").erased,
    ])
}
