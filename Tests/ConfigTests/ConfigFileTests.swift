import Testing

@testable import Config

/// Keys of every value type, declared as the gateway declares its own, so the file format
/// is tested apart from the gateway's table (CLITests check that table).
enum TestKey {
    enum Mode: String, CaseIterable, Sendable { case keyvalue, json }

    static let name = ConfigKey("name", .string, reload: true, "a string")
    static let names = ConfigKey("names", .strings, reload: true, "a list")
    static let enabled = ConfigKey("enabled", .boolean, default: "true", reload: true, "a boolean")
    static let limit = ConfigKey("limit", .integer, default: "1000", reload: true, "an integer")
    static let ttl = ConfigKey("ttl", .duration, default: "10s", reload: false, "a duration")
    static let mode = ConfigKey("mode", .choice(Mode.self), default: "keyvalue", reload: true, "a choice")
    static let port = ConfigKey(
        "port", ValueType<Int>.form("port") { Int($0).flatMap { (1...65535).contains($0) ? $0 : nil } }.list,
        default: "443", reload: true, "a list of a form")
    static let optionalPort = ConfigKey(
        "optional_port", ValueType<Int>.form("port") { Int($0) }.optional,
        reload: false, "off when empty")
    static let members = ConfigKey("members", .strings, reload: true, scope: .profile, "profile only")
    static let start = ConfigKey("start", .string, default: "on", reload: true, scope: .both, "both scopes")

    static let schema = ConfigSchema([
        name.erased, names.erased, enabled.erased, limit.erased, ttl.erased, mode.erased, port.erased,
        optionalPort.erased, members.erased, start.erased,
    ])
}

@Suite struct ConfigFileTests {
    func parse(_ text: String, path: String = "x.conf") throws(ConfigError) -> Settings {
        try ConfigFile.parse(text, path: path, schema: TestKey.schema)
    }

    @Test func parsesEveryValueType() throws {
        let settings = try parse(
            """
            # a test config
            name = "Kids' \\"gate\\" #1"   # quoted, with a comment
            names = school.example, "homework.example" ,, docs.example
            enabled = off
            limit = 50
            ttl = 1h30m
            mode = JSON
            port = 443, 8443
            optional_port = 9

            [profile alice]
            members = 192.168.1.20, aa:bb:cc:dd:ee:ff
            start = off
            [ profile bob ]
            """)
        #expect(settings[TestKey.name] == "Kids' \"gate\" #1")
        #expect(settings[TestKey.names] == ["school.example", "\"homework.example\"", "docs.example"])
        #expect(settings[TestKey.enabled] == false)
        #expect(settings[TestKey.limit] == 50)
        #expect(settings[TestKey.ttl] == .seconds(5400))
        #expect(settings[TestKey.mode] == .json)
        #expect(settings[TestKey.port] == [443, 8443])
        #expect(settings[TestKey.optionalPort] == 9)
        #expect(settings.profiles.map(\.name) == ["alice", "bob"])
        #expect(settings.profiles[0].settings[TestKey.members] == ["192.168.1.20", "aa:bb:cc:dd:ee:ff"])
        #expect(settings.profiles[0].settings[TestKey.start] == "off")
        #expect(settings.profiles[1].settings[TestKey.start] == "on")
        #expect(settings.profiles[1].settings.isSet(TestKey.start) == false)
    }

    @Test func defaultsWhenUnset() throws {
        let settings = try parse("", path: "empty.conf")
        #expect(settings[TestKey.enabled] == true)
        #expect(settings[TestKey.limit] == 1000)
        #expect(settings[TestKey.ttl] == .seconds(10))
        #expect(settings[TestKey.mode] == .keyvalue)
        #expect(settings[TestKey.port] == [443])
        #expect(settings[TestKey.names] == [])
        #expect(settings[TestKey.name] == "")
        #expect(settings[TestKey.optionalPort] == nil)
        #expect(!settings.isSet(TestKey.limit))
    }

    @Test(arguments: [
        ("limt = 5", "x.conf:1: limt: unknown key"),
        ("\n\nlimit = fast", "x.conf:3: limit: \"fast\" is not a whole number ≥ 0"),
        ("limit = -1", "x.conf:1: limit: \"-1\" is not a whole number ≥ 0"),
        ("ttl = 10 minutes", "x.conf:1: ttl: \"10 minutes\" is not a duration (e.g. 800ms, 30s, 5m, 6h, 1d)"),
        ("ttl = 5x", "x.conf:1: ttl: \"5x\" is not a duration (e.g. 800ms, 30s, 5m, 6h, 1d)"),
        ("enabled = maybe", "x.conf:1: enabled: \"maybe\" is not true or false"),
        ("mode = xml", "x.conf:1: mode: \"xml\" is not one of keyvalue, json"),
        ("port = 443, abc", "x.conf:1: port: \"abc\" is not a valid port"),
        ("optional_port = x", "x.conf:1: optional_port: \"x\" is not a valid port"),
        ("limit = 1\nlimit = 2", "x.conf:2: limit: set twice (first on line 1)"),
        ("members = 10.0.0.1", "x.conf:1: members: only allowed inside a [profile NAME] section"),
        ("[profile a]\nttl = 5s", "x.conf:2: ttl: not allowed inside a [profile] section"),
        ("[server]", "x.conf:1: unknown section [server] (only [profile NAME])"),
        ("[profile a]\n[profile a]", "x.conf:2: profile \"a\" is defined twice"),
        ("[profile a", "x.conf:1: section header must end with ]"),
        ("just words", "x.conf:1: expected `key = value`"),
        ("name = \"https://x", "x.conf:1: unterminated quote"),
        ("name = \"a\" b", "x.conf:1: name: text after a closing quote"),
    ])
    func errorsNameFileLineAndKey(text: String, message: String) {
        do {
            _ = try parse(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func missingFileNamesThePath() {
        do {
            _ = try ConfigFile.load("/nonexistent/phosra.conf", schema: TestKey.schema)
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.description == "/nonexistent/phosra.conf: No such file or directory")
        }
    }

    @Test func flagsWinOverTheFile() throws {
        let file = try parse("limit = 5\nenabled = false")
        var flags = Settings()
        try flags.applyFlag("--limit", value: "7", schema: TestKey.schema)
        try flags.applyFlag("--enabled", value: nil, schema: TestKey.schema)
        let merged = file.overridden(by: flags)
        #expect(merged[TestKey.limit] == 7)
        #expect(merged[TestKey.enabled] == true)
        #expect(merged.global.origin(TestKey.limit) == .flag("--limit"))
        #expect(merged.error(TestKey.limit, "too big").description == "--limit: too big")
        #expect(file.error(TestKey.limit, "too big").description == "x.conf:1: limit: too big")
        #expect(file.error(TestKey.ttl, "too long").description == "--ttl: too long")
    }

    @Test func flagErrors() {
        var flags = Settings()
        #expect(throws: ConfigError(.flag("--limt"), key: nil, "unknown flag")) {
            try flags.applyFlag("--limt", value: "1", schema: TestKey.schema)
        }
        #expect(throws: ConfigError(.flag("--members"), key: nil, "unknown flag")) {
            try flags.applyFlag("--members", value: "1", schema: TestKey.schema)
        }
        #expect(throws: ConfigError(.flag("--limit"), key: "limit", "needs a value")) {
            try flags.applyFlag("--limit", value: nil, schema: TestKey.schema)
        }
        #expect(
            throws: ConfigError(.flag("--ttl"), key: "ttl", "\"soon\" is not a duration (e.g. 800ms, 30s, 5m, 6h, 1d)")
        ) {
            try flags.applyFlag("--ttl", value: "soon", schema: TestKey.schema)
        }
    }

    @Test(arguments: [
        ("800ms", Int64(800)), ("30s", 30_000), ("5m", 300_000), ("6h", 21_600_000), ("1d", 86_400_000),
        ("1h30m", 5_400_000), ("3", 3000), ("0s", 0),
    ])
    func durations(text: String, milliseconds: Int64) {
        #expect(ValueType.parseDuration(text) == milliseconds)
        #expect(Duration.milliseconds(milliseconds).wholeMilliseconds == milliseconds)
        #expect(Duration.milliseconds(milliseconds).wholeNanoseconds == UInt64(milliseconds) * 1_000_000)
    }

    @Test(arguments: ["", "ms", "1h30", "-5s", "99999999999999999999s", "5 m", "5x"])
    func notDurations(text: String) {
        #expect(ValueType.parseDuration(text) == nil)
    }

    /// Found by the config fuzz target: "\r\n" is one Swift Character, so splitting on "\n"
    /// left a CRLF file as one line; one that began with a comment read as empty.
    @Test func crlfLineEndsReadAsLF() throws {
        let lf = "# limits\nlimit = 5\nttl = 2s   # short\n\n[profile alice]\nmembers = a, b\n"
        let crlf = lf.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
        let settings = try parse(crlf)
        #expect(settings == (try parse(lf)))
        #expect(settings[TestKey.limit] == 5 && settings[TestKey.ttl] == .seconds(2))
        #expect(settings.profiles.map(\.name) == ["alice"])
        #expect(throws: ConfigError(.file(path: "x.conf", line: 2), key: "nope", "unknown key")) {
            try parse("limit = 5\r\nnope = 1\r\n")
        }
    }

    /// Found by the config fuzz target: a value ending in U+070F (a mark that joins the
    /// character after it) could not be written quoted, as the closing quote became one
    /// Character with it; the same mark hid a list's comma, and a combining mark a quote.
    @Test func quotesCommasAndBackslashesCountWhateverMarksSurroundThem() throws {
        let settings = try parse("name = \"a\u{70F}\"\nnames = a, y\u{70F}, z\n")
        #expect(settings[TestKey.name] == "a\u{70F}")
        #expect(settings[TestKey.names] == ["a", "y\u{70F}", "z"])
        #expect(throws: ConfigError(.file(path: "x.conf", line: 1), key: "name", "text after a closing quote")) {
            try parse("name = \"a\"\u{301}\n")
        }
    }

    @Test func aByteOrderMarkIsIgnored() throws {
        let path = "/tmp/phosra-gate-bom-\(UInt32.random(in: 0...UInt32.max)).conf"
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("limit = 5\n".utf8)
        try SystemIOWrite.write(path, bytes)
        defer { SystemIOWrite.remove(path) }
        #expect(try ConfigFile.load(path, schema: TestKey.schema)[TestKey.limit] == 5)
    }
}
