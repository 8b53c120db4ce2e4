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

extension ConfigFileTests {
    @Test(arguments: [
        ("block_mode = explode", "x.conf:1: block_mode: \"explode\" is not nxdomain, null, refused or ip:V4[,V6]"),
        ("block_mode = ip:notanip", "x.conf:1: block_mode: \"ip:notanip\" is not nxdomain, null, refused or ip:V4[,V6]"),
        ("connect_ports = 443, abc", "x.conf:1: connect_ports: \"abc\" is not a valid port"),
        ("allow_clients = 10.0.0.0/8, notacidr", "x.conf:1: allow_clients: \"notacidr\" is not a valid IP or CIDR"),
        ("allow_clients = 10.0.0.0/33", "x.conf:1: allow_clients: \"10.0.0.0/33\" is not a valid IP or CIDR"),
        ("upstream = ???", "x.conf:1: upstream: \"???\" is not an upstream (IP[:port], tcp://IP[:port] or tls://IP[:853]#servername)"),
        ("upstream = tls://9.9.9.9", "x.conf:1: upstream: \"tls://9.9.9.9\" is not an upstream (IP[:port], tcp://IP[:port] or tls://IP[:853]#servername)"),
        ("dns_listen = localhost:53", "x.conf:1: dns_listen: \"localhost:53\" is not a valid ADDR:PORT"),
        ("dns_listen = 127.0.0.1", "x.conf:1: dns_listen: \"127.0.0.1\" is not a valid ADDR:PORT"),
        ("local_forward = lan", "x.conf:1: local_forward: \"lan\" is not a valid ZONE=IP[:port]"),
        ("api = not a url", "x.conf:1: api: \"not a url\" is not a valid URL"),
    ])
    func formattedValuesAreChecked(text: String, message: String) {
        do {
            _ = try ConfigFile.parse(text, path: "x.conf")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func formattedValuesThatAreRight() throws {
        let settings = try ConfigFile.parse("""
            block_mode = ip:192.0.2.1,2001:db8::1
            upstream = 9.9.9.9, 1.1.1.1:5353, tcp://[2001:db8::53]:53, tls://9.9.9.9#dns.quad9.net, tls://[::1]:8853#x.example
            dns_listen = 127.0.0.1:5300, [::1]:5300
            allow_clients = 10.0.0.0/8, ::1, 2001:db8::/32
            local_forward = lan=192.168.1.1, home.arpa=192.168.1.1:5353
            connect_ports = 443, 8443
            """, path: "x.conf")
        #expect(settings.list("upstream").compactMap(UpstreamSpec.init).map(\.description) == [
            "9.9.9.9:53", "1.1.1.1:5353", "tcp://[2001:db8::53]:53", "tls://9.9.9.9:853#dns.quad9.net", "tls://[::1]:8853#x.example"])
        #expect(BlockMode(settings.string("block_mode"))?.description == "ip:192.0.2.1,2001:db8::1")
        #expect(settings.list("dns_listen").compactMap(ListenAddress.init).map(\.port) == [5300, 5300])
        #expect(settings.list("local_forward").compactMap(LocalForward.init).map(\.zone.description) == ["lan", "home.arpa"])
    }

    @Test func aByteOrderMarkIsIgnored() throws {
        let path = "/tmp/phosra-gate-bom-\(UInt32.random(in: 0...UInt32.max)).conf"
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("rate_limit = 5\n".utf8)
        try SystemIOWrite.write(path, bytes)
        defer { SystemIOWrite.remove(path) }
        #expect(try ConfigFile.load(path).integer("rate_limit") == 5)
    }
}
