import Testing
@testable import Config

@Suite struct ConfigFileTests {
    @Test func parsesEveryValueKind() throws {
        let settings = try ConfigFile.parse("""
            # phosra-gate test config
            timezone = Europe/Berlin
            api = "https://api.example.com/api/v1"   # quoted, with a comment
            always_allow = school.example, "homework.example" ,, docs.example
            block_bypass = off
            rate_limit = 50
            block_ttl = 800ms
            poll_interval = 1h30m
            serve_stale_max = 2d
            upstream_timeout = 3
            log_format = JSON
            gateway_name = "Kids' \\"gate\\" #1"

            [profile alice]
            clients = 192.168.1.20, aa:bb:cc:dd:ee:ff
            initial_policy = none
            [ profile bob ]
            proxy_user = bob
            """, path: "test.conf")
        #expect(settings.string("timezone") == "Europe/Berlin")
        #expect(settings.string("api") == "https://api.example.com/api/v1")
        #expect(settings.list("always_allow") == ["school.example", "\"homework.example\"", "docs.example"])
        #expect(settings.boolean("block_bypass") == false)
        #expect(settings.integer("rate_limit") == 50)
        #expect(settings.duration("block_ttl") == 800)
        #expect(settings.duration("poll_interval") == 5_400_000)
        #expect(settings.duration("serve_stale_max") == 172_800_000)
        #expect(settings.duration("upstream_timeout") == 3000)
        #expect(settings.string("log_format") == "json")
        #expect(settings.string("gateway_name") == "Kids' \"gate\" #1")
        #expect(settings.profiles.map(\.name) == ["alice", "bob"])
        #expect(settings.profiles[0].settings["clients"]?.value == .list(["192.168.1.20", "aa:bb:cc:dd:ee:ff"]))
        #expect(settings.profiles[1].settings["proxy_user"]?.value == .string("bob"))
    }

    @Test func defaultsWhenUnset() throws {
        let settings = try ConfigFile.parse("", path: "empty.conf")
        #expect(settings.boolean("block_bypass") == true)
        #expect(settings.integer("rate_limit") == 1000)
        #expect(settings.duration("block_ttl") == 10_000)
        #expect(settings.duration("cache_max_ttl") == 86_400_000)
        #expect(settings.string("api") == "https://phosra-api.fly.dev/api/v1")
        #expect(settings.list("connect_ports") == ["443"])
        #expect(settings.list("always_allow") == [])
        #expect(settings.string("timezone") == "")
    }

    @Test(arguments: [
        ("rate_limt = 5", "x.conf:1: rate_limt: unknown key"),
        ("\n\nrate_limit = fast", "x.conf:3: rate_limit: \"fast\" is not a whole number ≥ 0"),
        ("rate_limit = -1", "x.conf:1: rate_limit: \"-1\" is not a whole number ≥ 0"),
        ("block_ttl = 10 minutes", "x.conf:1: block_ttl: \"10 minutes\" is not a duration (e.g. 800ms, 30s, 5m, 6h, 1d)"),
        ("block_ttl = 5x", "x.conf:1: block_ttl: \"5x\" is not a duration (e.g. 800ms, 30s, 5m, 6h, 1d)"),
        ("block_bypass = maybe", "x.conf:1: block_bypass: \"maybe\" is not true or false"),
        ("log_format = xml", "x.conf:1: log_format: \"xml\" is not one of keyvalue, json"),
        ("rate_limit = 1\nrate_limit = 2", "x.conf:2: rate_limit: set twice (first on line 1)"),
        ("clients = 10.0.0.1", "x.conf:1: clients: only allowed inside a [profile NAME] section"),
        ("[profile a]\ndns_listen = 127.0.0.1:53", "x.conf:2: dns_listen: not allowed inside a [profile] section"),
        ("[server]", "x.conf:1: unknown section [server] (only [profile NAME])"),
        ("[profile a]\n[profile a]", "x.conf:2: profile \"a\" is defined twice"),
        ("[profile a", "x.conf:1: section header must end with ]"),
        ("just words", "x.conf:1: expected `key = value`"),
        ("api = \"https://x", "x.conf:1: unterminated quote"),
        ("api = \"a\" b", "x.conf:1: api: text after a closing quote"),
    ])
    func errorsNameFileLineAndKey(text: String, message: String) {
        #expect(throws: ConfigError.self) { try ConfigFile.parse(text, path: "x.conf") }
        do {
            _ = try ConfigFile.parse(text, path: "x.conf")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func missingFileNamesThePath() {
        do {
            _ = try ConfigFile.load("/nonexistent/phosra.conf")
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.description == "/nonexistent/phosra.conf: No such file or directory")
        }
    }

    @Test func flagsWinOverTheFile() throws {
        let file = try ConfigFile.parse("rate_limit = 5\nblock_bypass = false", path: "x.conf")
        var flags = Settings()
        try flags.applyFlag("--rate-limit", value: "7")
        try flags.applyFlag("--block-bypass", value: nil)
        let merged = file.overridden(by: flags)
        #expect(merged.integer("rate_limit") == 7)
        #expect(merged.boolean("block_bypass") == true)
        #expect(merged.origin("rate_limit") == .flag("--rate-limit"))
        #expect(merged.error("rate_limit", "too big").description == "--rate-limit: too big")
    }

    @Test func flagErrors() {
        var flags = Settings()
        #expect(throws: ConfigError(.flag("--rate-limt"), key: nil, "unknown flag")) {
            try flags.applyFlag("--rate-limt", value: "1")
        }
        #expect(throws: ConfigError(.flag("--clients"), key: nil, "unknown flag")) {
            try flags.applyFlag("--clients", value: "1")
        }
        #expect(throws: ConfigError(.flag("--rate-limit"), key: "rate_limit", "needs a value")) {
            try flags.applyFlag("--rate-limit", value: nil)
        }
        #expect(throws: ConfigError(.flag("--block-ttl"), key: "block_ttl",
                                    "\"soon\" is not a duration (e.g. 800ms, 30s, 5m, 6h, 1d)")) {
            try flags.applyFlag("--block-ttl", value: "soon")
        }
    }

    @Test func everyKeyHasAValidDefaultAndAFlag() {
        var names = Set<String>()
        for key in ConfigKey.all {
            #expect(names.insert(key.name).inserted, "\(key.name) twice")
            #expect(key.flag == "--" + key.name.replacingOccurrences("_", "-"))
            if !key.defaultText.isEmpty {
                if case .failure(let problem) = ConfigValue.parse(key.defaultText, as: key.kind) {
                    Issue.record("\(key.name): \(problem.text)")
                }
            }
        }
    }
}

extension String {
    func replacingOccurrences(_ target: Character, _ replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}
