import Foundation
import Glibc
import TestSupport
import Testing

/// Transparent mode (docs/network.md#transparent-mode) with the kernel's real redirect:
/// in a network namespace the test makes, an "internet" address 203.0.113.10 (and
/// 2001:db8::10) holds an HTTPS origin (openssl s_server with the test CA), a "child" on
/// 203.0.113.20 (2001:db8::20) runs curl, and an nftables rule redirects the child's
/// connections to ports 80 and 443 to the gateway's transparent listener, as the firewall
/// does for LAN clients. The gateway's own connections to the origin are not redirected.
@Suite(.serialized) struct TransparentNamespaceTests {
    static let ruleset = """
        table inet pg_transparent_test {
            chain output {
                type nat hook output priority -100; policy accept;
                ip saddr 203.0.113.20 tcp dport { 80, 443 } redirect to :3129
                ip6 saddr 2001:db8::20 tcp dport { 80, 443 } redirect to :3129
            }
        }
        """

    @Test func redirectedConnectionsAreDecidedByNameAndAllowedOnesArriveByteForByte() throws {
        let net = try NetworkNamespaces.make(devices: 0)
        defer { net.remove() }
        let ns = net.gateway
        try net.run(in: ns, ["link", "set", "lo", "up"])
        // On the namespace's loopback: no other interface is needed for one host's traffic.
        for address in ["203.0.113.10/32", "203.0.113.20/32"] {
            try net.run(in: ns, ["address", "add", address, "dev", "lo"])
        }
        for address in ["2001:db8::10/128", "2001:db8::20/128"] {
            try net.run(in: ns, ["-6", "address", "add", address, "dev", "lo", "nodad"])
        }

        let scratch = try ScratchDirectory("pg-transparent")
        let rules = try scratch.write("rules.nft", Self.ruleset)
        let nft = try net.exec(in: ns, ["nft", "-f", rules])
        let applied = try SpawnedServer.run([nft.path] + nft.arguments, logFile: scratch.path("nft.log"))
        try #require(applied.status == 0, "nft: \(applied.output)")

        // The origin: a file served by openssl s_server -WWW on each family.
        let certificates = try TestCertificates()
        var body = [UInt8](repeating: 0, count: 300_000)
        for index in body.indices { body[index] = UInt8(truncatingIfNeeded: index &* 131 ^ index >> 9) }
        try Data(body).write(to: URL(fileURLWithPath: scratch.path("file.bin")))
        var origins: [SpawnedServer] = []
        defer { for origin in origins { origin.kill() } }
        for (index, accept) in ["203.0.113.10:443", "[2001:db8::10]:443"].enumerated() {
            let command = try net.exec(
                in: ns,
                [
                    "sh", "-c",
                    "cd \(scratch.path) && exec openssl s_server -accept '\(accept)' -WWW -naccept 20 "
                        + "-cert \(certificates.serverCertificate) -key \(certificates.serverKey)",
                ])
            origins.append(
                try SpawnedServer(
                    command.path, command.arguments, logFile: scratch.path("origin\(index).log"),
                    readyWhenLogContains: "ACCEPT"))
        }

        let policy = try scratch.write("policy.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        let run = try net.exec(
            in: ns,
            [
                GateRun.binary, "run", "--policy", policy, "--dns-listen", "127.0.0.1:5300", "--proxy-listen=",
                "--transparent-listen", "127.0.0.1:3129,[::1]:3129", "--upstream", "127.0.0.1:5399",
                "--state-dir", scratch.path("state"), "--timezone", "UTC",
                "--lists", GateRun.checkout.appendingPathComponent("blocklists").path,
                // Documentation ranges are not private: allowed by name.
                "--allow-clients", "203.0.113.0/24,2001:db8::/64",
            ])
        let gate = try SpawnedServer(
            run.path, run.arguments, logFile: scratch.path("gate.log"),
            readyWhenLogContains: "event=listening service=transparent tcp=[::1]:3129")
        defer { gate.kill() }

        func curl(_ arguments: [String], _ name: String) throws -> (status: Int32, output: String) {
            let command = try net.exec(
                in: ns, ["curl", "-sS", "--max-time", "8", "--cacert", certificates.caFile] + arguments)
            let result = try SpawnedServer.run([command.path] + command.arguments, logFile: scratch.path("\(name).log"))
            return (result.status >> 8, result.output)
        }
        for (family, child, origin) in [
            ("v4", "203.0.113.20", "203.0.113.10"), ("v6", "2001:db8::20", "[2001:db8::10]"),
        ] {
            let out = scratch.path("out-\(family).bin")
            let allowed = try curl(
                [
                    "--interface", child, "--resolve", "dot.test:443:\(origin)", "-o", out,
                    "https://dot.test/file.bin",
                ], "allowed-\(family)")
            #expect(allowed.status == 0, "\(family): \(allowed.output)\n\(gate.log)")
            #expect((try? Data(contentsOf: URL(fileURLWithPath: out))) == Data(body), "\(family): byte for byte")

            let blocked = try curl(
                ["--interface", child, "--resolve", "www.reddit.com:443:\(origin)", "-k", "https://www.reddit.com/"],
                "blocked-\(family)")
            #expect(blocked.status == 35, "\(family): a TLS failure, got \(blocked.status): \(blocked.output)")
            #expect(blocked.output.lowercased().contains("access denied"), "\(family): \(blocked.output)")
        }
        // Plain HTTP: decided on Host, the block page from the gateway itself.
        let page = try curl(
            ["--interface", "203.0.113.20", "--resolve", "www.reddit.com:80:203.0.113.10", "http://www.reddit.com/"],
            "page")
        #expect(page.output.contains("A parent has blocked this site."), "\(page.output)")
        #expect(page.output.contains("www.reddit.com"), "\(page.output)")
        // Not redirected (the origin's own address as source): the origin answers itself.
        let direct = try curl(
            [
                "--interface", "203.0.113.10", "--resolve", "www.reddit.com:443:203.0.113.10", "-k", "-o", "/dev/null",
                "-w", "%{http_code}", "https://www.reddit.com/file.bin",
            ], "direct")
        #expect(direct.output == "200", "\(direct.output)")

        gate.signal(SIGTERM)
        _ = waitUntil(timeout: .seconds(5)) { !gate.isRunning }
        let hits = try HitSummary.read(stateDirectory: scratch.path("state"))
        let reddit = hits.filter { $0.domain == "www.reddit.com" }
        #expect(reddit.allSatisfy { $0.source == "transparent" && $0.reason == "blocked_domain:reddit.com" }, "\(hits)")
        #expect(Set(reddit.map(\.client)) == ["203.0.113.20", "2001:db8::20"], "\(hits)")
        #expect(reddit.map(\.count).reduce(0, +) == 3, "two TLS connections and one page: \(hits)")
    }
}
