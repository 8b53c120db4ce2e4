import Foundation
import GateHarness
import Glibc
import TestSupport
import Testing

/// Transparent mode (docs/network.md#transparent-mode) with the kernel's real redirect, in
/// network namespaces the test makes: a "child's device" behind a veth pair, and a gateway
/// whose nftables rule redirects the device's connections to ports 80 and 443 to the
/// transparent listener, as the firewall does for LAN clients. The "internet" host
/// 203.0.113.10 (2001:db8:2::10) sits on the gateway's loopback with an HTTPS origin
/// (openssl s_server and the test CA); the gateway's own connections to it are not
/// redirected. Its upstream is dnsmasq on the gateway's loopback, which gives `dot.test`
/// that host's addresses; a second host, 203.0.113.20 (2001:db8:2::20), stands for a
/// blocked site whose address a device knows, and a counter in the gateway's output path
/// counts every connection the gateway opens to it.
@Suite(.serialized, .blocking) struct TransparentNamespaceTests {
    static let ruleset = """
        table inet pg_transparent_test {
            counter to_second_host { }
            chain prerouting {
                type nat hook prerouting priority -100; policy accept;
                iifname "lan0" tcp dport { 80, 443 } redirect to :3129
            }
            chain output {
                type filter hook output priority 0; policy accept;
                ip daddr 203.0.113.20 tcp flags & (syn | ack) == syn counter name "to_second_host"
                ip6 daddr 2001:db8:2::20 tcp flags & (syn | ack) == syn counter name "to_second_host"
            }
        }
        """

    /// What the gateway's upstream answers: the names of these tests and their hosts.
    static let records = [
        "--host-record=dot.test,203.0.113.10,2001:db8:2::10",
        "--host-record=second.test,203.0.113.20,2001:db8:2::20",
        "--host-record=capture.test,203.0.113.30",
    ]

    /// The namespaces, the origin and the gateway, torn down by `stop()`.
    final class LAN {
        let net: NetworkNamespaces
        let scratch: ScratchDirectory
        let certificates: TestCertificates
        var servers: [SpawnedServer] = []
        var gate: SpawnedServer!
        /// The gateway in the test's process instead (`inProcess`), on a clock the test moves.
        var inProcess: InProcessGate?
        /// What the origin serves as /file.bin.
        let body: [UInt8]

        /// `transparent_destination`, as the gateway is started with.
        let destination: String

        /// `inProcess`: the gateway runs in the test's process (in the gateway's namespace)
        /// on a clock the test moves, not as the binary.
        init(destination: String = "connect", inProcess: Bool = false) throws {
            self.destination = destination
            net = try NetworkNamespaces.make(devices: 1)
            scratch = try ScratchDirectory("pg-transparent")
            certificates = try TestCertificates()
            var bytes = [UInt8](repeating: 0, count: 300_000)
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 131 ^ index >> 9) }
            body = bytes
            do { try build(inProcess: inProcess) } catch {
                stop()
                throw error
            }
        }

        private func build(inProcess: Bool) throws {
            let (gateway, device) = (net.gateway, net.device)
            try net.run(in: gateway, ["link", "set", "lo", "up"])
            try net.run(in: gateway, ["address", "add", "203.0.113.10/32", "dev", "lo"])
            try net.run(in: gateway, ["-6", "address", "add", "2001:db8:2::10/128", "dev", "lo", "nodad"])
            try net.run(in: gateway, ["address", "add", "203.0.113.20/32", "dev", "lo"])
            try net.run(in: gateway, ["-6", "address", "add", "2001:db8:2::20/128", "dev", "lo", "nodad"])
            try net.run(in: gateway, ["address", "add", "203.0.113.30/32", "dev", "lo"])
            try net.run(in: gateway, ["link", "add", "lan0", "type", "veth", "peer", "name", "eth0", "netns", device])
            try net.run(in: gateway, ["address", "add", "198.51.100.1/24", "dev", "lan0"])
            try net.run(in: gateway, ["-6", "address", "add", "2001:db8:1::1/64", "dev", "lan0", "nodad"])
            try net.run(in: gateway, ["link", "set", "lan0", "up"])
            try net.run(in: device, ["link", "set", "lo", "up"])
            try net.run(in: device, ["address", "add", "198.51.100.10/24", "dev", "eth0"])
            try net.run(in: device, ["-6", "address", "add", "2001:db8:1::10/64", "dev", "eth0", "nodad"])
            try net.run(in: device, ["link", "set", "eth0", "up"])
            try net.run(in: device, ["route", "add", "default", "via", "198.51.100.1"])
            try net.run(in: device, ["-6", "route", "add", "default", "via", "2001:db8:1::1"])

            let rules = try scratch.write("rules.nft", TransparentNamespaceTests.ruleset)
            let nft = try net.exec(in: gateway, ["nft", "-f", rules])
            let applied = try SpawnedServer.run([nft.path] + nft.arguments, logFile: scratch.path("nft.log"))
            guard applied.status == 0 else { throw SpawnedServerError(message: "nft: \(applied.output)") }

            // The upstream, answering from its command line only (see DnsmasqUpstream).
            let dnsmasq = try net.exec(
                in: gateway,
                [
                    DnsmasqUpstream.path, "--keep-in-foreground", "--no-resolv", "--no-hosts", "--no-poll",
                    "--conf-file=/dev/null", "--pid-file=", "--bind-interfaces", "--listen-address=127.0.0.1",
                    "--port=5399", "--log-queries", "--log-facility=-", "--local-ttl=300",
                ] + TransparentNamespaceTests.records)
            servers.append(
                try SpawnedServer(
                    dnsmasq.path, dnsmasq.arguments, logFile: scratch.path("dnsmasq.log"),
                    readyWhenLogContains: "started, version"))

            let policy = try scratch.write(
                "policy.json", PolicyDocuments.json(blocked: ["reddit.com", "games.example"]))
            let words = [
                "--policy", policy, "--dns-listen", "127.0.0.1:5300", "--proxy-listen=",
                "--transparent-listen", "198.51.100.1:3129,[2001:db8:1::1]:3129", "--upstream", "127.0.0.1:5399",
                "--state-dir", scratch.path("state"), "--timezone", "UTC", "--gateway-name", "Test gateway",
                "--lists", GateRun.checkout.appendingPathComponent("blocklists").path,
                // Documentation ranges are not private: allowed by name.
                "--allow-clients", "198.51.100.0/24,2001:db8:1::/64",
                // The "internet" host is on the gateway's own loopback.
                "--allow-local-destinations", "--transparent-destination", destination,
            ]
            if inProcess {
                // Its threads are made from one in the gateway's namespace, and stay there.
                let scratch = self.scratch
                self.inProcess = try net.inside(gateway) { try InProcessGate(words, scratch: scratch, port: 5300) }
                return
            }
            let run = try net.exec(in: gateway, [GateRun.binary, "run"] + words)
            gate = try SpawnedServer(
                run.path, run.arguments, logFile: scratch.path("gate.log"),
                readyWhenLogContains: "event=listening service=transparent tcp=[2001:db8:1::1]:3129")
        }

        /// `/file.bin` (`body`) over HTTPS on 203.0.113.10:443 and [2001:db8:2::10]:443, from
        /// openssl s_server (one connection at a time, which is all curl needs).
        func serveFile() throws {
            try Data(body).write(to: URL(fileURLWithPath: scratch.path("file.bin")))
            for (index, accept) in ["203.0.113.10:443", "[2001:db8:2::10]:443"].enumerated() {
                let command = try net.exec(
                    in: net.gateway,
                    [
                        "sh", "-c",
                        "cd \(scratch.path) && exec openssl s_server -accept '\(accept)' -WWW -naccept 50 "
                            + "-cert \(certificates.serverCertificate) -key \(certificates.serverKey)",
                    ])
                servers.append(
                    try SpawnedServer(
                        command.path, command.arguments, logFile: scratch.path("origin\(index).log"),
                        readyWhenLogContains: "ACCEPT"))
            }
        }

        /// An HTML page over HTTPS on 203.0.113.10:443 from a server of the test's own, made
        /// inside the gateway's namespace: a browser opens several connections at once.
        func servePage(_ html: String) throws -> TestHTTPServer {
            let context = try TestTLSServerContext(certificates)
            return try net.inside(net.gateway) {
                try TestHTTPServer(host: "203.0.113.10", port: 443, tls: context) { _ in
                    .respond(.init(status: 200, headers: [("Content-Type", "text/html")], text: html))
                }
            }
        }

        /// `curl` on the device, with the test CA; its exit status and output.
        func curl(_ arguments: [String], _ name: String) throws -> (status: Int32, output: String) {
            let command = try net.exec(
                in: net.device, ["curl", "-sS", "--max-time", "8", "--cacert", certificates.caFile] + arguments)
            let result = try SpawnedServer.run([command.path] + command.arguments, logFile: scratch.path("\(name).log"))
            return (result.status >> 8, result.output)
        }

        /// Headless Chromium on the device (no proxy setting: the network is the filter),
        /// every name mapped to the internet host; its rendered DOM (and its noise).
        func chromium(_ url: String, _ name: String, seconds: Int = 40) throws -> String {
            let command = try net.exec(
                in: net.device,
                [
                    "timeout", "\(seconds)", "/usr/bin/chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
                    "--no-first-run", "--disable-extensions", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--ignore-certificate-errors",
                    "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable",
                    "--host-resolver-rules=MAP * 203.0.113.10", "--user-data-dir=\(scratch.path("chromium"))",
                    "--dump-dom", url,
                ])
            // A fresh namespace settles (IPv6 link-local addresses finish their checks) in
            // the first seconds, and Chromium abandons a load on such a change: try again.
            var output = ""
            for attempt in 1...3 {
                output = try SpawnedServer.run(
                    [command.path] + command.arguments, logFile: scratch.path("\(name)-\(attempt).log")
                ).output
                if !output.contains("ERR_NETWORK_CHANGED") { break }
            }
            return output
        }

        /// Connections the gateway has opened to the second host (203.0.113.20 or
        /// 2001:db8:2::20) since the start: the SYNs its output path counted.
        func connectionsToSecondHost() throws -> Int {
            let list = try net.exec(
                in: net.gateway, ["nft", "list", "counter", "inet", "pg_transparent_test", "to_second_host"])
            let result = try SpawnedServer.run([list.path] + list.arguments, logFile: scratch.path("counter.log"))
            guard result.status == 0,
                let range = result.output.range(of: #"packets (\d+)"#, options: .regularExpression),
                let count = Int(result.output[range].dropFirst("packets ".count))
            else { throw SpawnedServerError(message: "nft list counter: \(result.output)") }
            return count
        }

        /// An HTTP origin (TLS on 443) of the test's own on `host`:`port` in the gateway's
        /// namespace, answering every request with `marker`.
        func origin(_ host: String, port: UInt16, marker: String) throws -> TestHTTPServer {
            let context = port == 443 ? try TestTLSServerContext(certificates) : nil
            return try net.inside(net.gateway) {
                try TestHTTPServer(host: host, port: port, tls: context) { _ in
                    .respond(.init(status: 200, headers: [("Content-Type", "text/plain")], text: marker))
                }
            }
        }

        /// The hits the gateway queued, once it has stopped (SIGTERM flushes them).
        func stopGateAndReadHits() throws -> [HitSummary] {
            gate.signal(SIGTERM)
            _ = waitUntil(timeout: .seconds(5)) { !gate.isRunning }
            return try HitSummary.read(stateDirectory: scratch.path("state"))
        }

        func stop() {
            inProcess?.stop()
            gate?.kill()
            for server in servers { server.kill() }
            net.remove()
        }
    }

    /// Plain HTTP redirected to port 80 follows the policy as tunnels do
    /// (docs/proxy.md#open-connections-follow-the-policy): a download in progress ends with
    /// a reset within a second of a new policy blocking its host, so what the gateway held
    /// for a device that had stopped reading (16 KiB receive buffer) never reaches it.
    @Test func aRedirectedDownloadEndsWhenANewPolicyBlocksItsHost() throws {
        try SocketMemoryTests.exclusively {
            let lan = try LAN()
            defer { lan.stop() }
            let origin = try lan.net.inside(lan.net.gateway) {
                try StreamingOrigin(httpHead: true, host: "203.0.113.10", port: 80)
            }
            func download(receiveBuffer: Int32?) throws -> ProxyClient {
                let client = try lan.net.inside(lan.net.device) {
                    try ProxyClient(host: "203.0.113.10", port: 80, timeout: 6, receiveBuffer: receiveBuffer)
                }
                client.send("GET /endless HTTP/1.1\r\nHost: dot.test\r\n\r\n")
                do {
                    try client.readAtLeast(256 * 1024)
                } catch {
                    throw ProxyClientError(message: "\(error)\n\(lan.gate.log)")
                }
                return client
            }
            let reader = try download(receiveBuffer: nil)
            let stalled = try download(receiveBuffer: 16_384)
            // The stalled device's socket fills; the gateway's buffers for it fill behind it
            // while the new policy is noticed.
            #expect(waitUntil { stalled.queuedBytes() >= 16_384 }, "the stalled device's socket filled")
            let next = try lan.scratch.write(
                "policy.json.new",
                PolicyDocuments.json(blocked: ["reddit.com", "games.example", "dot.test"], version: 4))
            #expect(rename(next, lan.scratch.path("policy.json")) == 0)
            let (ended, seconds) = timed { reader.readUntilClosedOrReset() != nil }
            #expect(ended, "still open 6 s after the new policy")
            #expect(seconds < 2.5, "ended \(seconds) s after the new policy (noticed within a second, then a tick)")
            #expect(stalled.waitForHangup(seconds: 3), "the stalled device's connection was not reset")
            let held = stalled.queuedBytes()  // arrived before the end
            let after = try #require(stalled.readUntilClosedOrReset(), "the stalled download never ended")
            #expect(
                after.count - held < 64 * 1024,
                "\(after.count - held) bytes reached the stalled device after the end (\(held) held before)")
            let hits = try lan.stopGateAndReadHits().filter { $0.domain == "dot.test" }
            #expect(hits.map(\.reason) == ["blocked_domain:dot.test"], "\(hits)")
            #expect(hits.first?.source == "transparent" && hits.first?.count == 2, "\(hits)")
            _ = origin
        }
    }

    @Test func redirectedConnectionsAreDecidedByNameAndAllowedOnesArriveByteForByte() throws {
        let lan = try LAN()
        defer { lan.stop() }
        try lan.serveFile()
        for (family, origin) in [("v4", "203.0.113.10"), ("v6", "[2001:db8:2::10]")] {
            let out = lan.scratch.path("out-\(family).bin")
            let allowed = try lan.curl(
                ["--resolve", "dot.test:443:\(origin)", "-o", out, "https://dot.test/file.bin"], "allowed-\(family)")
            #expect(allowed.status == 0, "\(family): \(allowed.output)\n\(lan.gate.log)")
            #expect((try? Data(contentsOf: URL(fileURLWithPath: out))) == Data(lan.body), "\(family): byte for byte")

            let blocked = try lan.curl(
                ["--resolve", "www.reddit.com:443:\(origin)", "-k", "https://www.reddit.com/"], "blocked-\(family)")
            #expect(blocked.status == 35, "\(family): a TLS failure, got \(blocked.status): \(blocked.output)")
            #expect(blocked.output.lowercased().contains("access denied"), "\(family): \(blocked.output)")
        }
        // Plain HTTP: decided on Host; the block page comes from the gateway itself.
        let page = try lan.curl(["--resolve", "www.reddit.com:80:203.0.113.10", "http://www.reddit.com/"], "page")
        #expect(page.output.contains("A parent has blocked this site."), "\(page.output)")
        #expect(page.output.contains("www.reddit.com"), "\(page.output)")

        lan.gate.signal(SIGTERM)
        _ = waitUntil(timeout: .seconds(5)) { !lan.gate.isRunning }
        let hits = try HitSummary.read(stateDirectory: lan.scratch.path("state"))
        let reddit = hits.filter { $0.domain == "www.reddit.com" }
        #expect(reddit.allSatisfy { $0.source == "transparent" && $0.reason == "blocked_domain:reddit.com" }, "\(hits)")
        #expect(Set(reddit.map(\.client)) == ["198.51.100.10", "2001:db8:1::10"], "\(hits)")
        #expect(reddit.map(\.count).reduce(0, +) == 3, "two TLS connections and one page: \(hits)")
    }

    @Test func aBrowserBehindTheGatewayLoadsAnAllowedPageAndSeesTheBlockPage() throws {
        let lan = try LAN()
        defer { lan.stop() }
        let origin = try lan.servePage("<html><body><p id=\"origin\">Homework help from the origin</p></body></html>")
        defer { origin.stop() }
        let allowed = try lan.chromium("https://dot.test/", "chromium-allowed")
        #expect(allowed.contains("<p id=\"origin\">Homework help from the origin</p>"), "\(allowed)")
        // A name no browser knows to upgrade to HTTPS (reddit.com is HSTS-preloaded).
        let blocked = try lan.chromium("http://games.example/play", "chromium-blocked")
        #expect(blocked.contains("<h1>This site is blocked</h1>"), "\(blocked)")
        #expect(blocked.contains("<p class=\"site\">games.example</p>"), "\(blocked)")
        #expect(blocked.contains("Blocked by phosra-gate on Test gateway."), "\(blocked)")
    }

    /// The ways around the SNI check a curious child tried, through transparent mode: a
    /// hello after a 2.5 s pause, a record header alone with the rest 2.5 s later, a hello
    /// padded past 16 KiB, a server name with two trailing dots, and plain HTTP on port
    /// 443. Each is closed with a `tls_unreadable` hit (source `transparent`) before a byte
    /// reaches the origin.
    @Test func everyWayAroundTheNameCheckIsClosedWithAHit() throws {
        let lan = try LAN(inProcess: true)
        defer { lan.stop() }
        let gate = try #require(lan.inProcess)
        let origin = try lan.net.inside(lan.net.gateway) { try RawOrigin(host: "203.0.113.10", port: 443) }
        let hello = TLSClientHello.record(serverName: "www.reddit.com")
        let padded = TLSClientHello.records(
            TLSClientHello.handshake(serverName: "www.reddit.com", padding: 17_000), fragmentSize: 16_384)
        let tries = ["pause", "header first", "padded", "two dots", "not TLS"]
        let sockets = try lan.net.inside(lan.net.device) {
            try tries.map { _ in try ProxyClient(host: "203.0.113.10", port: 443, timeout: 6) }
        }
        sockets[1].send(Array(hello.prefix(5)))
        sockets[2].send(padded)
        sockets[3].send(TLSClientHello.record(serverName: "www.reddit.com.."))
        sockets[4].send("GET / HTTP/1.1\r\nHost: www.reddit.com\r\n\r\n")
        // Closed for what they sent, the clock not moved.
        for (what, socket) in zip(tries, sockets).dropFirst(2) {
            #expect(socket.readUntilClosedOrReset() == [], "\(what): closed without a byte")
        }
        // The scenario's pause, past the check's 2 s, on the gateway's clock, once the
        // gateway has taken the connections (their check's time runs from there).
        gate.waitForTurns()
        #expect(gate.advance(by: .seconds(2.5)))
        sockets[0].send(hello)
        sockets[1].send(Array(hello.dropFirst(5)))
        for (what, socket) in zip(tries, sockets).prefix(2) {
            #expect(socket.readUntilClosedOrReset() == [], "\(what): closed without a byte")
        }
        #expect(origin.received().isEmpty, "the origin got not one byte")
        #expect(gate.stop(), "\(gate.log)")
        let hits = try HitSummary.read(stateDirectory: lan.scratch.path("state")).filter {
            $0.reason == "tls_unreadable"
        }
        #expect(hits.map(\.domain) == ["203.0.113.10"], "\(hits)")
        #expect(hits.map(\.source) == ["transparent"], "\(hits)")
        #expect(hits.map(\.count) == [5], "\(hits)")
    }
}
