import Foundation
import Glibc
import TestSupport
import Testing

/// The firewall on a routed LAN built in network namespaces (docs/network.md#the-firewall):
/// the real gateway routes between a LAN bridge and an "internet" link, runs
/// `phosra-gate run` with DNS on its LAN addresses, and `phosra-gate firewall apply`
/// loads its table. On the internet side a fake public resolver answers every name with
/// one address, and plain sockets stand for a DNS-over-TLS server, a QUIC server and a
/// DNS-over-HTTPS resolver. Filtered devices (one by MAC, one by address) asking that
/// resolver get the gateway's answers, over IPv4 and IPv6, UDP and TCP; their encrypted
/// DNS and QUIC are refused at once; an unfiltered device (`default_profile = none`)
/// reaches everything. With `transparent_listen`, a filtered device's HTTPS is decided by
/// its server name. `firewall remove` leaves the gateway's ruleset as it found it.
/// Addresses are from the documentation ranges and exist only inside these namespaces.
@Suite(.serialized, .blocking) struct FirewallLANTests {
    static let kidMAC = "02:00:5e:10:00:0a"
    /// kid (by MAC), teen (by address), adult (no entry: `none`).
    static let devices = [
        (mac: kidMAC, v4: "198.51.100.10", v6: "2001:db8:1::10"),
        (mac: "02:00:5e:10:00:0b", v4: "198.51.100.30", v6: "2001:db8:1::30"),
        (mac: "02:00:5e:10:00:0c", v4: "198.51.100.20", v6: "2001:db8:1::20"),
    ]
    static let resolver4 = "203.0.113.53"
    static let resolver6 = "2001:db8:2::53"
    static let dohResolver = "203.0.113.99"
    /// What the fake public resolver answers for every name.
    static let publicAnswer = "203.0.113.250"
    /// What the gateway's own upstream answers for an allowed name.
    static let gatewayAnswer = "203.0.113.22"
    static let udpPorts: [UInt16] = [443, 784, 853, 8853]
    /// An HTTPS site on the internet (openssl s_server with the test certificate).
    static let origin4 = "203.0.113.10"
    static let origin6 = "2001:db8:2::10"
    /// A blocked site's host, which a child names in `--resolve` with an allowed name.
    static let other4 = "203.0.113.20"
    static let other6 = "2001:db8:2::20"

    @Test func filteredDevicesCannotGoAroundTheGateway() throws {
        let lan = try NetworkNamespaces.make(devices: 4)
        defer { lan.remove() }
        let gateway = lan.gateway
        let internet = lan.devices[3]
        let scratch = try ScratchDirectory("pg-firewall-lan")
        func sh(_ namespace: String, _ command: String) throws {
            let words = try lan.exec(in: namespace, ["/bin/sh", "-c", command])
            let result = try SpawnedServer.run([words.path] + words.arguments, logFile: scratch.path("sh.out"))
            guard result.status == 0 else { throw NamespaceError.command("\(command): \(result.output)") }
        }

        // The gateway: a LAN bridge, an internet link, and forwarding on.
        try lan.run(in: gateway, ["link", "set", "lo", "up"])
        try lan.run(in: gateway, ["link", "add", "br0", "type", "bridge"])
        try lan.run(in: gateway, ["address", "add", "198.51.100.1/24", "dev", "br0"])
        try lan.run(in: gateway, ["-6", "address", "add", "2001:db8:1::1/64", "dev", "br0", "nodad"])
        try lan.run(in: gateway, ["link", "set", "br0", "up"])
        for (index, device) in Self.devices.enumerated() {
            let namespace = lan.devices[index]
            try lan.run(
                in: gateway,
                ["link", "add", "lan\(index)", "type", "veth", "peer", "name", "eth0", "netns", namespace])
            try lan.run(in: gateway, ["link", "set", "lan\(index)", "master", "br0"])
            try lan.run(in: gateway, ["link", "set", "lan\(index)", "up"])
            try lan.run(in: namespace, ["link", "set", "lo", "up"])
            try lan.run(in: namespace, ["link", "set", "eth0", "address", device.mac])
            try lan.run(in: namespace, ["address", "add", "\(device.v4)/24", "dev", "eth0"])
            try lan.run(in: namespace, ["-6", "address", "add", "\(device.v6)/64", "dev", "eth0", "nodad"])
            try lan.run(in: namespace, ["link", "set", "eth0", "up"])
            try lan.run(in: namespace, ["route", "add", "default", "via", "198.51.100.1"])
            try lan.run(in: namespace, ["-6", "route", "add", "default", "via", "2001:db8:1::1"])
        }
        try lan.run(
            in: gateway, ["link", "add", "wan0", "type", "veth", "peer", "name", "eth0", "netns", internet])
        try lan.run(in: gateway, ["address", "add", "203.0.113.1/24", "dev", "wan0"])
        try lan.run(in: gateway, ["-6", "address", "add", "2001:db8:2::1/64", "dev", "wan0", "nodad"])
        try lan.run(in: gateway, ["link", "set", "wan0", "up"])
        try sh(gateway, "echo 1 > /proc/sys/net/ipv4/ip_forward && echo 1 > /proc/sys/net/ipv6/conf/all/forwarding")

        // The internet: a public resolver and a DNS-over-HTTPS resolver, routed back to the LAN.
        try lan.run(in: internet, ["link", "set", "lo", "up"])
        try lan.run(in: internet, ["address", "add", "\(Self.resolver4)/24", "dev", "eth0"])
        try lan.run(in: internet, ["address", "add", "\(Self.dohResolver)/24", "dev", "eth0"])
        try lan.run(in: internet, ["-6", "address", "add", "\(Self.resolver6)/64", "dev", "eth0", "nodad"])
        try lan.run(in: internet, ["address", "add", "\(Self.origin4)/24", "dev", "eth0"])
        try lan.run(in: internet, ["-6", "address", "add", "\(Self.origin6)/64", "dev", "eth0", "nodad"])
        try lan.run(in: internet, ["address", "add", "\(Self.other4)/24", "dev", "eth0"])
        try lan.run(in: internet, ["-6", "address", "add", "\(Self.other6)/64", "dev", "eth0", "nodad"])
        try lan.run(in: internet, ["link", "set", "eth0", "up"])
        try lan.run(in: internet, ["route", "add", "198.51.100.0/24", "via", "203.0.113.1"])
        try lan.run(in: internet, ["-6", "route", "add", "2001:db8:1::/64", "via", "2001:db8:2::1"])

        let dnsmasq = "/usr/sbin/dnsmasq"
        let common = [
            "--keep-in-foreground", "--no-resolv", "--no-hosts", "--no-poll", "--conf-file=/dev/null", "--pid-file=",
            "--bind-interfaces", "--log-facility=-", "--local-ttl=300",
        ]
        let publicWords = try lan.exec(
            in: internet,
            [dnsmasq] + common + [
                "--listen-address=\(Self.resolver4)", "--listen-address=\(Self.resolver6)", "--port=53",
                "--address=/#/\(Self.publicAnswer)",
            ])
        let publicResolver = try SpawnedServer(
            publicWords.path, publicWords.arguments, logFile: scratch.path("public.log"),
            readyWhenLogContains: "started")
        defer { publicResolver.kill() }
        let upstreamWords = try lan.exec(
            in: gateway,
            [dnsmasq] + common + [
                "--listen-address=127.0.0.1", "--port=5399", "--host-record=www.reddit.com,203.0.113.21",
                "--host-record=example.org,\(Self.gatewayAnswer)",
                // Transparent mode connects an allowed name to its own address.
                "--host-record=dot.test,\(Self.origin4),\(Self.origin6)",
            ])
        let upstream = try SpawnedServer(
            upstreamWords.path, upstreamWords.arguments, logFile: scratch.path("upstream.log"),
            readyWhenLogContains: "started")
        defer { upstream.kill() }

        // Plain sockets for DNS-over-TLS (TCP 853), DNS-over-QUIC (UDP 853, 784, 8853), QUIC
        // (UDP 443) and the DoH resolver (TCP 443): without the firewall every probe below
        // would reach one, so a refusal can only come from the gateway.
        let listeners = try lan.inside(internet) { () throws -> [String: Int32] in
            var fds: [String: Int32] = [:]
            for port in Self.udpPorts {
                fds["udp \(port)"] = try FirewallProbes.listener(Int32(SOCK_DGRAM.rawValue), Self.resolver4, port)
            }
            fds["udp6 443"] = try FirewallProbes.listener(Int32(SOCK_DGRAM.rawValue), Self.resolver6, 443)
            fds["tcp 853"] = try FirewallProbes.listener(Int32(SOCK_STREAM.rawValue), Self.resolver4, 853)
            fds["tcp6 853"] = try FirewallProbes.listener(Int32(SOCK_STREAM.rawValue), Self.resolver6, 853)
            fds["doh"] = try FirewallProbes.listener(Int32(SOCK_STREAM.rawValue), Self.dohResolver, 443)
            for (address, port) in [(Self.other4, 443), (Self.other4, 80), (Self.other6, 443), (Self.other6, 80)] {
                fds["other \(address) \(port)"] = try FirewallProbes.listener(
                    Int32(SOCK_STREAM.rawValue), address, UInt16(port))
            }
            return fds
        }
        defer { for fd in listeners.values { close(fd) } }

        // The HTTPS site: /file.bin over each family.
        let certificates = try TestCertificates()
        var body = [UInt8](repeating: 0, count: 200_000)
        for index in body.indices { body[index] = UInt8(truncatingIfNeeded: index &* 131 ^ index >> 9) }
        try Data(body).write(to: URL(fileURLWithPath: scratch.path("file.bin")))
        var origins: [SpawnedServer] = []
        defer { for origin in origins { origin.kill() } }
        for (index, accept) in ["\(Self.origin4):443", "[\(Self.origin6)]:443"].enumerated() {
            let words = try lan.exec(
                in: internet,
                [
                    "/bin/sh", "-c",
                    "cd \(scratch.path) && exec openssl s_server -accept '\(accept)' -WWW -naccept 50 "
                        + "-cert \(certificates.serverCertificate) -key \(certificates.serverKey)",
                ])
            origins.append(
                try SpawnedServer(
                    words.path, words.arguments, logFile: scratch.path("origin\(index).log"),
                    readyWhenLogContains: "ACCEPT"))
        }

        let kid = try scratch.write("kid.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        let config = try scratch.write(
            "phosra-gate.conf",
            """
            lan_interfaces = br0
            dns_listen = 198.51.100.1:53, [2001:db8:1::1]:53
            upstream = 127.0.0.1:5399
            state_dir = \(scratch.path("state"))
            lists = \(GateRun.checkout.appendingPathComponent("blocklists").path)
            timezone = UTC
            proxy_listen =
            transparent_listen = 198.51.100.1:3129, [2001:db8:1::1]:3129
            # Documentation ranges are not private: the LAN's must be allowed by name.
            allow_clients = 198.51.100.0/24, 2001:db8:1::/64
            doh_addresses = \(Self.dohResolver)
            default_profile = none
            [profile kid]
            clients = \(Self.kidMAC)
            policy = \(kid)
            [profile teen]
            clients = \(Self.devices[1].v4), \(Self.devices[1].v6)
            policy = \(kid)
            """)
        let runWords = try lan.exec(in: gateway, [GateRun.binary, "run", "--config", config])
        let gate = try SpawnedServer(
            runWords.path, runWords.arguments, logFile: scratch.path("gate.log"),
            readyWhenLogContains: "event=listening")
        defer { gate.kill() }

        func inGateway(_ words: [String], _ log: String) throws -> (status: Int32, output: String) {
            let command = try lan.exec(in: gateway, words)
            return try SpawnedServer.run([command.path] + command.arguments, logFile: scratch.path(log))
        }
        let nft = ["/usr/sbin/nft", "/sbin/nft"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let nft else {
            Issue.record("nft is not installed: run scripts/install-deps --test")
            return
        }
        // Someone else's table, which apply and remove must leave alone.
        #expect(try inGateway([nft, "add", "table", "inet", "household"], "nft.out").status == 0)
        let chain = "{ type filter hook forward priority 0; policy accept; }"
        #expect(try inGateway([nft, "add", "chain", "inet", "household", "forward", chain], "nft.out").status == 0)
        let before = try inGateway([nft, "list", "ruleset"], "before.out")
        #expect(before.output.contains("table inet household"), "\(before.output)")
        #expect(before.status == 0, "\(before.output)")
        let apply = try inGateway([GateRun.binary, "firewall", "apply", "--config", config], "apply.out")
        #expect(apply.status == 0, "\(apply.output)")
        #expect(apply.output.contains("applied table inet phosra_gate: LAN br0"), "\(apply.output)")
        let listed = try inGateway([nft, "list", "table", "inet", "phosra_gate"], "list.out")
        #expect(listed.output.contains(Self.dohResolver), "\(listed.output)")

        func dig(
            _ device: Int, _ name: String, server: String = FirewallLANTests.resolver4, _ options: [String] = []
        )
            throws
            -> DigAnswer
        {
            let words = try lan.exec(
                in: lan.devices[device], ["dig", "@\(server)", name, "A", "+tries=1", "+time=3"] + options)
            return DigAnswer(
                output: try SpawnedServer.run([words.path] + words.arguments, logFile: scratch.path("dig.out")).output)
        }
        let blocked = ["15 (Blocked): (blocked_domain:reddit.com)"]

        // Filtered devices asking a public resolver are answered by the gateway. The kid
        // is known by MAC, which the gateway learns from its first answers: ask until it has.
        for device in [0, 1] {
            for server in [Self.resolver4, Self.resolver6] {
                let caught = try waitFor(timeout: 10_000_000_000, interval: 200_000_000) { () throws -> Bool? in
                    try dig(device, "www.reddit.com", server: server).extendedErrors == blocked ? true : nil
                }
                #expect(caught == true, "device \(device) asking \(server): \(gate.log)")
                #expect(try dig(device, "www.reddit.com", server: server, ["+tcp"]).extendedErrors == blocked)
                #expect(try dig(device, "example.org", server: server).answerData == [Self.gatewayAnswer])
            }
        }

        // Their encrypted DNS is refused at once (not after a timeout), so they fall back.
        let kdigWords = try lan.exec(
            in: lan.devices[0], ["kdig", "+tls", "@\(Self.resolver4)", "example.org", "+timeout=5", "+retry=0"])
        let started = ContinuousClock.now
        let kdig = try SpawnedServer.run([kdigWords.path] + kdigWords.arguments, logFile: scratch.path("kdig.out"))
        let took = ContinuousClock.now - started
        #expect(kdig.status != 0)
        #expect(kdig.output.contains("can't connect to \(Self.resolver4)@853(TCP)"), "\(kdig.output)")
        #expect(took < .seconds(2), "kdig took \(took)")
        for device in [0, 1] {
            let outcomes = try lan.inside(lan.devices[device]) {
                [
                    "tcp 853": FirewallProbes.tcp(Self.resolver4, 853),
                    "tcp6 853": FirewallProbes.tcp(Self.resolver6, 853),
                    "udp6 443": FirewallProbes.udp(Self.resolver6, 443),
                    "doh": FirewallProbes.tcp(Self.dohResolver, 443),
                ].merging(Self.udpPorts.map { ("udp \($0)", FirewallProbes.udp(Self.resolver4, $0)) }) { $1 }
            }
            #expect(outcomes.count == 8)
            for (probe, outcome) in outcomes.sorted(by: { $0.key < $1.key }) {
                #expect(outcome == .refused, "device \(device): \(probe)")
            }
        }

        // Transparent mode: HTTPS from a filtered device is decided by its server name, an
        // allowed site arrives byte for byte, a blocked one ends in a TLS alert; the
        // unfiltered device is not redirected at all.
        func curl(_ device: Int, _ arguments: [String], _ log: String) throws -> (status: Int32, output: String) {
            let words = try lan.exec(
                in: lan.devices[device],
                ["curl", "-sS", "--max-time", "8", "--cacert", certificates.caFile] + arguments)
            let result = try SpawnedServer.run([words.path] + words.arguments, logFile: scratch.path(log))
            return (result.status >> 8, result.output)
        }
        for (family, origin) in [("v4", Self.origin4), ("v6", "[\(Self.origin6)]")] {
            let out = scratch.path("kid-\(family).bin")
            let allowed = try curl(
                0, ["--resolve", "dot.test:443:\(origin)", "-o", out, "https://dot.test/file.bin"], "allowed.out")
            #expect(allowed.status == 0, "\(family): \(allowed.output)\n\(gate.log)")
            #expect((try? Data(contentsOf: URL(fileURLWithPath: out))) == Data(body), "\(family): byte for byte")
            let refused = try curl(
                0, ["--resolve", "www.reddit.com:443:\(origin)", "-k", "https://www.reddit.com/file.bin"], "refused.out"
            )
            #expect(refused.status == 35, "\(family): \(refused.output)")
            #expect(refused.output.lowercased().contains("access denied"), "\(family): \(refused.output)")
            let untouched = try curl(
                2,
                [
                    "--resolve", "www.reddit.com:443:\(origin)", "-k", "-o", scratch.path("adult.bin"),
                    "https://www.reddit.com/file.bin",
                ], "untouched.out")
            #expect(untouched.status == 0, "\(family): \(untouched.output)")
        }

        // An allowed name sent to another site's address (docs/network.md#the-destination-check):
        // the gateway connects the name to its own address, so the file arrives from the
        // allowed site and the other host is never reached, on 443 and 80, over each family.
        for (family, other) in [("v4", Self.other4), ("v6", "[\(Self.other6)]")] {
            let out = scratch.path("fronted-\(family).bin")
            let fronted = try curl(
                0, ["--resolve", "dot.test:443:\(other)", "-o", out, "https://dot.test/file.bin"], "fronted.out")
            #expect(fronted.status == 0, "\(family): \(fronted.output)\n\(gate.log)")
            #expect((try? Data(contentsOf: URL(fileURLWithPath: out))) == Data(body), "\(family): from dot.test's host")
            _ = try curl(0, ["--resolve", "dot.test:80:\(other)", "http://dot.test/"], "fronted80.out")
        }
        for (name, fd) in listeners where name.hasPrefix("other ") {
            #expect(!FirewallProbes.connected(fd), "\(name) was reached")
        }

        // The unfiltered device reaches the public resolver and every server.
        #expect(try dig(2, "www.reddit.com").answerData == [Self.publicAnswer])
        #expect(try dig(2, "www.reddit.com", server: Self.resolver6).answerData == [Self.publicAnswer])
        let adult = try lan.inside(lan.devices[2]) {
            [FirewallProbes.tcp(Self.resolver4, 853), FirewallProbes.tcp(Self.dohResolver, 443)]
        }
        #expect(adult == [.connected, .connected])
        _ = try lan.inside(lan.devices[2]) { FirewallProbes.udp(Self.resolver4, 443, milliseconds: 100) }
        #expect(FirewallProbes.received(listeners["udp 443"]!), "the unfiltered device's UDP 443 datagram")

        // Removed, the gateway's ruleset is as it was, and the kid reaches the public resolver.
        let remove = try inGateway([GateRun.binary, "firewall", "remove"], "remove.out")
        #expect(remove.status == 0, "\(remove.output)")
        let after = try inGateway([nft, "list", "ruleset"], "after.out")
        #expect(after.output == before.output)
        #expect(try dig(0, "www.reddit.com").answerData == [Self.publicAnswer])
        // Removing again is no error.
        #expect(try inGateway([GateRun.binary, "firewall", "remove"], "remove.out").status == 0)
        #expect(gate.isRunning)
    }
}
