import Config
import DNSProxy
import DNSUpstream
import DomainMatch
import TestSupport
import Testing

@testable import Commands
@testable import Gateway

/// The gateway's own key table: every key unique, its default valid, and the forms of
/// addresses, upstreams and block modes checked when the file is read.
@Suite(.blocking) struct ConfigKeyTests {
    func parse(_ text: String) throws(ConfigError) -> Settings {
        try ConfigFile.parse(text, path: "x.conf", schema: Key.schema)
    }

    @Test func everyKeyIsDeclaredOnceWithAFlag() {
        var names = Set<String>()
        for key in Key.all {
            #expect(names.insert(key.name).inserted, "\(key.name) twice")
            #expect(key.flag == "--" + String(key.name.map { $0 == "_" ? "-" : $0 }))
            #expect(Key.schema.flagNamed(key.flag)?.name == key.name)
        }
        #expect(names.count == Key.all.count)
    }

    @Test func defaults() throws {
        let settings = try parse("")
        #expect(settings[Key.blockBypass] == true)
        #expect(settings[Key.rateLimit] == 1000)
        #expect(settings[Key.blockTTL] == .seconds(10))
        #expect(settings[Key.cacheMaxTTL] == .seconds(86_400))
        #expect(settings[Key.api] == "https://phosra-api.fly.dev/api/v1")
        #expect(settings[Key.connectPorts] == [443])
        #expect(settings[Key.alwaysAllow] == [])
        #expect(settings[Key.timezone] == "")
        #expect(settings[Key.blockMode] == .nxdomain)
        #expect(settings[Key.dnsListen].map(\.description) == ["0.0.0.0:53"])
        #expect(settings[Key.metricsListen] == nil)
        #expect(settings[Key.initialPolicy] == .strict)
        #expect(settings[Key.onNoPolicy] == .keep)
        #expect(settings[Key.logFormat] == .keyvalue)
    }

    @Test(arguments: [
        ("block_mode = explode", "x.conf:1: block_mode: \"explode\" is not nxdomain, null, refused or ip:V4[,V6]"),
        (
            "block_mode = ip:notanip",
            "x.conf:1: block_mode: \"ip:notanip\" is not nxdomain, null, refused or ip:V4[,V6]"
        ),
        ("connect_ports = 443, abc", "x.conf:1: connect_ports: \"abc\" is not a valid port"),
        ("connect_ports = 0", "x.conf:1: connect_ports: \"0\" is not a valid port"),
        ("allow_clients = 10.0.0.0/8, notacidr", "x.conf:1: allow_clients: \"notacidr\" is not a valid IP or CIDR"),
        ("allow_clients = 10.0.0.0/33", "x.conf:1: allow_clients: \"10.0.0.0/33\" is not a valid IP or CIDR"),
        (
            "upstream = ???",
            "x.conf:1: upstream: \"???\" is not an upstream (IP[:port], tcp://IP[:port] or tls://IP[:853]#servername)"
        ),
        (
            "upstream = tls://9.9.9.9",
            "x.conf:1: upstream: \"tls://9.9.9.9\" is not an upstream (IP[:port], tcp://IP[:port] or tls://IP[:853]#servername)"
        ),
        ("dns_listen = localhost:53", "x.conf:1: dns_listen: \"localhost:53\" is not a valid ADDR:PORT"),
        ("dns_listen = 127.0.0.1", "x.conf:1: dns_listen: \"127.0.0.1\" is not a valid ADDR:PORT"),
        ("metrics_listen = nowhere", "x.conf:1: metrics_listen: \"nowhere\" is not a valid ADDR:PORT"),
        ("local_forward = lan", "x.conf:1: local_forward: \"lan\" is not a valid ZONE=IP[:port]"),
        ("api = not a url", "x.conf:1: api: \"not a url\" is not a valid URL"),
        ("log_format = xml", "x.conf:1: log_format: \"xml\" is not one of keyvalue, json"),
        ("initial_policy = lax", "x.conf:1: initial_policy: \"lax\" is not one of strict, none"),
        ("rate_limt = 5", "x.conf:1: rate_limt: unknown key"),
        ("clients = 10.0.0.1", "x.conf:1: clients: only allowed inside a [profile NAME] section"),
        ("[profile a]\ndns_listen = 127.0.0.1:53", "x.conf:2: dns_listen: not allowed inside a [profile] section"),
    ])
    func formsAreCheckedWhenRead(text: String, message: String) {
        do {
            _ = try parse(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func formsThatAreRight() throws {
        let settings = try parse(
            """
            block_mode = ip:192.0.2.1,2001:db8::1
            upstream = 9.9.9.9, 1.1.1.1:5353, tcp://[2001:db8::53]:53, tls://9.9.9.9#dns.quad9.net, tls://[::1]:8853#x.example
            dns_listen = 127.0.0.1:5300, [::1]:5300
            allow_clients = 10.0.0.0/8, ::1, 2001:db8::/32
            local_forward = lan=192.168.1.1, home.arpa=192.168.1.1:5353
            connect_ports = 443, 8443
            metrics_listen = 127.0.0.1:9153
            tunnel_idle = 90s
            """)
        #expect(
            settings[Key.upstream].map(\.description) == [
                "9.9.9.9:53", "1.1.1.1:5353", "tcp://[2001:db8::53]:53", "tls://9.9.9.9:853#dns.quad9.net",
                "tls://[::1]:8853#x.example",
            ])
        #expect(settings[Key.blockMode].description == "ip:192.0.2.1,2001:db8::1")
        #expect(settings[Key.dnsListen].map(\.port) == [5300, 5300])
        #expect(settings[Key.allowClients].map(\.description) == ["10.0.0.0/8", "::1/128", "2001:db8::/32"])
        #expect(settings[Key.localForward].map(\.zone.description) == ["lan", "home.arpa"])
        #expect(settings[Key.connectPorts] == [443, 8443])
        #expect(settings[Key.metricsListen]?.description == "127.0.0.1:9153")
        #expect(settings[Key.tunnelIdle].wholeNanoseconds == 90_000_000_000)
    }

    /// `proxy_auth` is a choice, optional by default; a `passwd` hash is a `proxy_password`
    /// as written (its `$`, `=` and `/` need no quotes).
    @Test func proxyAuthentication() throws {
        #expect(try parse("")[Key.proxyAuth].rawValue == "optional")
        #expect(try parse("proxy_auth = Required")[Key.proxyAuth].rawValue == "required")
        #expect(
            throws: ConfigError(
                .file(path: "x.conf", line: 1), key: "proxy_auth", "\"maybe\" is not one of optional, required")
        ) {
            try parse("proxy_auth = maybe")
        }
        let hash = "$scrypt$ln=14,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$Zm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9v+/"
        let settings = try parse("[profile anna]\nproxy_user = anna\nproxy_password = \(hash) # from passwd\n")
        #expect(settings.profiles.first?.settings[Key.proxyPassword] == hash)
    }

    @Test func flagsUseTheSameTable() throws {
        let arguments = try Arguments(
            ["--rate-limit", "7", "--allow-ip-connect", "--block-mode=null", "x.example"],
            commandFlags: [:])
        #expect(arguments.settings[Key.rateLimit] == 7)
        #expect(arguments.settings[Key.allowIPConnect] == true)
        #expect(arguments.settings[Key.blockMode] == .null)
        #expect(arguments.operands == ["x.example"])
        #expect(throws: ConfigError(.flag("--rate-limt"), key: nil, "unknown flag")) {
            try Arguments(["--rate-limt", "7"], commandFlags: [:])
        }
    }
}
