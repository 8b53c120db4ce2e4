import Firewall
import Foundation
import Glibc
import TestSupport
import Testing

/// Egress for filtered devices on a routed LAN built in network namespaces
/// (docs/network.md#egress): the real gateway routes between a LAN bridge and an
/// "internet" link, runs `phosra-gate run` without CAP_NET_ADMIN, and, as the firewall's
/// unit does, `firewall watch` beside it and its table loaded with `firewall apply`. On
/// the internet side a public resolver answers on port 5353 (UDP and TCP), and plain
/// sockets stand for a proxy on TCP 8443, a WireGuard server on UDP 51820, Apple's push
/// service on TCP 5223, a time server on UDP 123 and a web server on TCP 443. The kid's
/// profile is `egress = web` (the default): its 5353, 8443 and 51820 are refused at once,
/// over IPv4 and IPv6, and the gateway records `circumvention:egress` hits; the built-in
/// set and the web (without transparent mode) stay reachable. The unfiltered device is
/// untouched. The hits reach the daemon only through the watch's file. `firewall remove`
/// leaves the ruleset as it found it. Addresses are from the documentation ranges and
/// exist only inside these namespaces.
@Suite(.serialized, .blocking) struct FirewallEgressTests {
    static let kid = (v4: "198.51.100.10", v6: "2001:db8:1::10")
    static let adult = (v4: "198.51.100.20", v6: "2001:db8:1::20")
    static let server4 = "203.0.113.53"
    static let server6 = "2001:db8:2::53"
    static let publicAnswer = "203.0.113.250"
    /// Refusals come back at once; a drop would make each probe wait for its full bound.
    static let atOnce: Duration = .milliseconds(900)

    @Test func aWebDeviceReachesOnlyTheWebAndTheBuiltInSet() throws {
        let lan = try NetworkNamespaces.make(devices: 3)
        defer { lan.remove() }
        let gateway = lan.gateway
        let internet = lan.devices[2]
        let scratch = try ScratchDirectory("pg-firewall-egress")
        func sh(_ namespace: String, _ command: String) throws {
            let words = try lan.exec(in: namespace, ["/bin/sh", "-c", command])
            let result = try SpawnedServer.run([words.path] + words.arguments, logFile: scratch.path("sh.out"))
            guard result.status == 0 else { throw NamespaceError.command("\(command): \(result.output)") }
        }

        try lan.run(in: gateway, ["link", "set", "lo", "up"])
        try lan.run(in: gateway, ["link", "add", "br0", "type", "bridge"])
        try lan.run(in: gateway, ["address", "add", "198.51.100.1/24", "dev", "br0"])
        try lan.run(in: gateway, ["-6", "address", "add", "2001:db8:1::1/64", "dev", "br0", "nodad"])
        try lan.run(in: gateway, ["link", "set", "br0", "up"])
        for (index, device) in [Self.kid, Self.adult].enumerated() {
            let namespace = lan.devices[index]
            try lan.run(
                in: gateway,
                ["link", "add", "lan\(index)", "type", "veth", "peer", "name", "eth0", "netns", namespace])
            try lan.run(in: gateway, ["link", "set", "lan\(index)", "master", "br0"])
            try lan.run(in: gateway, ["link", "set", "lan\(index)", "up"])
            try lan.run(in: namespace, ["link", "set", "lo", "up"])
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
        try lan.run(in: internet, ["link", "set", "lo", "up"])
        try lan.run(in: internet, ["address", "add", "\(Self.server4)/24", "dev", "eth0"])
        try lan.run(in: internet, ["-6", "address", "add", "\(Self.server6)/64", "dev", "eth0", "nodad"])
        try lan.run(in: internet, ["link", "set", "eth0", "up"])
        try lan.run(in: internet, ["route", "add", "198.51.100.0/24", "via", "203.0.113.1"])
        try lan.run(in: internet, ["-6", "route", "add", "2001:db8:1::/64", "via", "2001:db8:2::1"])

        // A public resolver that also answers on 5353, as OpenDNS does.
        let resolverWords = try lan.exec(
            in: internet,
            [
                "/usr/sbin/dnsmasq", "--keep-in-foreground", "--no-resolv", "--no-hosts", "--no-poll",
                "--conf-file=/dev/null", "--pid-file=", "--bind-interfaces", "--log-facility=-",
                "--listen-address=\(Self.server4)", "--listen-address=\(Self.server6)", "--port=5353",
                "--address=/#/\(Self.publicAnswer)",
            ])
        let resolver = try SpawnedServer(
            resolverWords.path, resolverWords.arguments, logFile: scratch.path("resolver.log"),
            readyWhenLogContains: "started")
        defer { resolver.kill() }
        let listeners = try lan.inside(internet) { () throws -> [String: Int32] in
            let tcp = Int32(SOCK_STREAM.rawValue)
            let udp = Int32(SOCK_DGRAM.rawValue)
            return [
                "tcp 8443": try FirewallProbes.listener(tcp, Self.server4, 8443),
                "tcp6 8443": try FirewallProbes.listener(tcp, Self.server6, 8443),
                "udp 51820": try FirewallProbes.listener(udp, Self.server4, 51820),
                "udp6 51820": try FirewallProbes.listener(udp, Self.server6, 51820),
                "tcp 5223": try FirewallProbes.listener(tcp, Self.server4, 5223),
                "tcp6 5223": try FirewallProbes.listener(tcp, Self.server6, 5223),
                "udp 123": try FirewallProbes.listener(udp, Self.server4, 123),
                "tcp 443": try FirewallProbes.listener(tcp, Self.server4, 443),
            ]
        }
        defer { for fd in listeners.values { close(fd) } }

        let kidPolicy = try scratch.write("kid.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        let state = scratch.path("state")
        let attempts = scratch.path("egress-attempts")
        let config = try scratch.write(
            "phosra-gate.conf",
            """
            lan_interfaces = br0
            dns_listen = 198.51.100.1:53, [2001:db8:1::1]:53
            upstream = 127.0.0.1:9
            state_dir = \(state)
            lists = \(GateRun.checkout.appendingPathComponent("blocklists").path)
            timezone = UTC
            proxy_listen =
            allow_clients = 198.51.100.0/24, 2001:db8:1::/64
            default_profile = none
            egress_attempts = \(attempts)
            [profile kid]
            clients = \(Self.kid.v4), \(Self.kid.v6)
            policy = \(kidPolicy)
            """)
        // The daemon as its unit runs it: without the right to read or change the table.
        let runWords = try lan.exec(
            in: gateway,
            [
                "/usr/bin/setpriv", "--inh-caps=-net_admin", "--bounding-set=-net_admin", "--", GateRun.binary,
                "run", "--config", config,
            ])
        let gate = try SpawnedServer(
            runWords.path, runWords.arguments, logFile: scratch.path("gate.log"),
            readyWhenLogContains: "event=listening")
        defer { gate.kill() }
        #expect(try Self.effectiveCapabilities(gate.pid) & Self.netAdmin == 0, "the daemon holds CAP_NET_ADMIN")

        func inGateway(_ words: [String], _ log: String) throws -> (status: Int32, output: String) {
            let command = try lan.exec(in: gateway, words)
            return try SpawnedServer.run([command.path] + command.arguments, logFile: scratch.path(log))
        }
        guard
            let nft = ["/usr/sbin/nft", "/sbin/nft"].first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            Issue.record("nft is not installed: run scripts/install-deps --test")
            return
        }
        let before = try inGateway([nft, "list", "ruleset"], "before.out")
        #expect(before.status == 0, "\(before.output)")

        // The watch before the table: it says so once, however many times it reads, and
        // leaves a file with no attempts, which the daemon reads.
        let watchWords = try lan.exec(in: gateway, [GateRun.binary, "firewall", "watch", "--config", config])
        let watch = try SpawnedServer(
            watchWords.path, watchWords.arguments, logFile: scratch.path("watch.log"),
            readyWhenLogContains: "state=absent")
        defer { watch.kill() }
        let firstRead = try Self.readAttempts(attempts)
        #expect(firstRead?.attempts == [])
        // No table yet: the file says so, for the daemon's `trouble`.
        #expect(firstRead?.tableAbsent == true)
        let secondRead = waitFor(timeout: 15_000_000_000, interval: 200_000_000) { () -> EgressAttemptsFile? in
            guard let file = try? Self.readAttempts(attempts), file.read != firstRead?.read else { return nil }
            return file
        }
        #expect(secondRead?.attempts == [], "\(watch.log)")
        #expect(watch.log.occurrences(of: "event=firewall_watch state=absent") == 1, "\(watch.log)")
        #expect(
            waitUntil(timeout: 15_000_000_000, interval: 200_000_000) {
                gate.log.contains("event=egress_watch state=reading")
            }, "\(gate.log)")
        let apply = try inGateway([GateRun.binary, "firewall", "apply", "--config", config], "apply.out")
        #expect(apply.status == 0, "\(apply.output)")
        #expect(apply.output.contains("egress = web for kid"), "\(apply.output)")
        #expect(
            waitUntil(timeout: 15_000_000_000, interval: 200_000_000) {
                watch.log.contains("event=firewall_watch state=reading")
            }, "\(watch.log)")
        #expect(try Self.readAttempts(attempts)?.tableAbsent == false)

        // DNS to an outside resolver on 5353, over UDP and TCP and both families: refused
        // at once, not after dig's 3 s.
        func dig(_ device: Int, server: String, _ options: [String] = []) throws -> (DigAnswer, Duration) {
            let words = try lan.exec(
                in: lan.devices[device],
                ["dig", "@\(server)", "-p", "5353", "example.org", "A", "+tries=1", "+time=3"] + options)
            let started = ContinuousClock.now
            let output = try SpawnedServer.run([words.path] + words.arguments, logFile: scratch.path("dig.out")).output
            return (DigAnswer(output: output), ContinuousClock.now - started)
        }
        for server in [Self.server4, Self.server6] {
            for options in [[], ["+tcp"]] {
                let (answer, took) = try dig(0, server: server, options)
                #expect(answer.answerData.isEmpty, "\(server) \(options): \(answer.output)")
                #expect(answer.output.contains("refused"), "\(server) \(options): \(answer.output)")
                #expect(took < Self.atOnce, "\(server) \(options): dig took \(took)")
            }
        }

        // A proxy on 8443 and WireGuard on 51820: refused at once. The built-in set (Apple
        // push on TCP 5223, the time on UDP 123) and the web reach their servers.
        let kid = try lan.inside(lan.devices[0]) { () -> [String: (FirewallProbes.Outcome, Duration)] in
            func timed(_ probe: () -> FirewallProbes.Outcome) -> (FirewallProbes.Outcome, Duration) {
                let started = ContinuousClock.now
                let outcome = probe()
                return (outcome, ContinuousClock.now - started)
            }
            return [
                "tcp 8443": timed { FirewallProbes.tcp(Self.server4, 8443) },
                "tcp6 8443": timed { FirewallProbes.tcp(Self.server6, 8443) },
                "udp 51820": timed { FirewallProbes.udp(Self.server4, 51820) },
                "udp6 51820": timed { FirewallProbes.udp(Self.server6, 51820) },
                "tcp 5223": timed { FirewallProbes.tcp(Self.server4, 5223) },
                "tcp6 5223": timed { FirewallProbes.tcp(Self.server6, 5223) },
                "tcp 443": timed { FirewallProbes.tcp(Self.server4, 443) },
            ]
        }
        for probe in ["tcp 8443", "tcp6 8443", "udp 51820", "udp6 51820"] {
            #expect(kid[probe]?.0 == .refused, "\(probe): \(String(describing: kid[probe]))")
            #expect((kid[probe]?.1 ?? .seconds(9)) < Self.atOnce, "\(probe): \(String(describing: kid[probe]))")
        }
        for probe in ["tcp 5223", "tcp6 5223", "tcp 443"] {
            #expect(kid[probe]?.0 == .connected, "\(probe): \(String(describing: kid[probe]))")
        }
        #expect(!FirewallProbes.received(listeners["udp 51820"]!, milliseconds: 100), "no WireGuard datagram passed")
        _ = try lan.inside(lan.devices[0]) { FirewallProbes.udp(Self.server4, 123, milliseconds: 100) }
        #expect(FirewallProbes.received(listeners["udp 123"]!), "the kid's NTP datagram")

        // The unfiltered device is untouched: its 5353 query is answered, its 8443 connects.
        let (adultAnswer, _) = try dig(1, server: Self.server4)
        #expect(adultAnswer.answerData == [Self.publicAnswer], "\(adultAnswer.output)")
        #expect(try lan.inside(lan.devices[1]) { FirewallProbes.tcp(Self.server4, 8443) } == .connected)

        // The gateway records each refused device, protocol and port as a hit of the kid's
        // profile: read from the table within its 5 s interval, in the store within 5 s more.
        let expected = ["udp/5353", "tcp/5353", "tcp/8443", "udp/51820"]
        var listed = ""
        let recorded = try waitFor(timeout: 30_000_000_000, interval: 500_000_000) { () throws -> Bool? in
            let hits = try SpawnedServer.run(
                [GateRun.binary, "hits", "--state-dir", state, "--profile", "kid", "--json"],
                logFile: scratch.path("hits.out"))
            listed = hits.output
            return expected.allSatisfy { listed.contains(#""domain":"\#($0)""#) } ? true : nil
        }
        #expect(recorded == true, "\(listed)\n\(gate.log)")
        #expect(listed.contains(#""reasons":["circumvention:egress"]"#), "\(listed)")
        #expect(!listed.contains("5223"), "the built-in set makes no hit: \(listed)")
        #expect(gate.log.contains("event=egress_refused"), "\(gate.log)")
        let file = try Self.readAttempts(attempts)
        #expect(file?.attempts.contains { $0.name == "udp/51820" && $0.client.description == Self.kid.v4 } == true)

        // Stopped as the unit stops it: SIGTERM ends the watch at once and takes its file
        // away; the unit then removes the table. The ruleset is as it was, and the kid
        // reaches 8443 again.
        watch.signal(SIGTERM)
        #expect(waitUntil(timeout: 5_000_000_000, interval: 50_000_000) { !watch.isRunning }, "\(watch.log)")
        #expect(watch.log.contains("event=firewall_watch state=stopped signal=TERM"), "\(watch.log)")
        #expect(!FileManager.default.fileExists(atPath: attempts))
        #expect(!watch.log.contains("state=failing"), "\(watch.log)")
        let remove = try inGateway([GateRun.binary, "firewall", "remove"], "remove.out")
        #expect(remove.status == 0, "\(remove.output)")
        let after = try inGateway([nft, "list", "ruleset"], "after.out")
        #expect(after.output == before.output)
        #expect(try lan.inside(lan.devices[0]) { FirewallProbes.tcp(Self.server4, 8443) } == .connected)
        #expect(gate.isRunning)
        #expect(!gate.log.contains("event=egress_watch state=failing"), "\(gate.log)")
        #expect(!gate.log.contains("state=malformed"), "\(gate.log)")
        // The daemon runs no nft: it has no table to name, only the file.
        #expect(!gate.log.contains("nft"), "\(gate.log)")
    }

    /// CAP_NET_ADMIN's bit in a capability set (linux/capability.h).
    static let netAdmin: UInt64 = 1 << 12

    /// The effective capabilities of process `pid`, from /proc.
    static func effectiveCapabilities(_ pid: pid_t) throws -> UInt64 {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("CapEff:") }
        return line.flatMap { UInt64($0.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16) }
            ?? UInt64.max
    }

    /// The watch's file as the daemon reads it; nil when there is none.
    static func readAttempts(_ path: String) throws -> EgressAttemptsFile? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try EgressAttemptsFile.parse(Array(data))
    }
}
