import Foundation
import Store
import TestSupport
import Testing

/// `phosra-gate doctor` against the real `run` on loopback (docs/doctor.md): a healthy
/// gateway passes, and each broken part fails with its own line and exit status 1.
@Suite(.serialized, .blocking) struct DoctorIntegrationTests {
    /// A gateway as a parent has it: DNS and proxy listeners, dnsmasq as the upstream, a
    /// fresh lists folder, and either a local policy file or a registration with the fake
    /// Phosra API. `flags` are what `run` gets, and `doctor` gets the same.
    final class Home: @unchecked Sendable {
        // Sendable: set up in init and only read afterwards, by the test thread.
        let scratch: ScratchDirectory
        let upstream: DnsmasqUpstream
        let api: FakePhosraAPI?
        let port = FreePort.tcpAndUDP()
        let proxyPort = FreePort.tcpAndUDP()
        let state: String
        let lists: String
        var flags: [String]

        init(withAPI: Bool = false) throws {
            scratch = try ScratchDirectory("pg-doctor")
            upstream = try DnsmasqUpstream(["--host-record=a.root-servers.net,198.51.100.4"])
            state = scratch.path("state")
            lists = scratch.path("lists")
            _ = try scratch.write("lists/adult/list.txt", "adult.example\n")
            flags = [
                "--dns-listen", "127.0.0.1:\(port)", "--proxy-listen", "127.0.0.1:\(proxyPort)", "--state-dir", state,
                "--lists", lists, "--upstream", upstream.spec, "--timezone", "UTC",
            ]
            if withAPI {
                let api = try FakePhosraAPI()
                self.api = api
                let child = api.addChild(age: 10)
                _ = api.addPolicy(FakePolicy.quickSetup(age: 10), to: child)
                let token = try scratch.write("token", FakePhosraAPI.defaultParentToken + "\n")
                let registered = try GateCommand.run([
                    "register", "--api", api.baseURL, "--child-id", child, "--parent-token-file", token,
                    "--state-dir", state, "--name", "doctor test",
                ])
                try #require(registered.status == 0, "register: \(registered.stderr)")
                flags += ["--api", api.baseURL]
            } else {
                api = nil
                flags += ["--policy", try scratch.write("kid.json", PolicyDocuments.json(blocked: ["reddit.com"]))]
            }
        }

        /// `run`, once it has written its first heartbeat (on a loaded machine that can
        /// come after its listeners are up; `doctor` before it rightly says so).
        func start() throws -> GateRun {
            let gate = try GateRun(flags, scratch: scratch, port: port)
            let state = self.state
            _ = waitUntil(timeout: .seconds(10)) {
                ((try? Store.openReadOnly(directory: state).heartbeat()) ?? nil) != nil
            }
            return gate
        }

        /// `doctor --json` with `run`'s flags. The wall clock is a test clock set to now,
        /// so the clock check is skipped: whether this machine's clock is synchronised is
        /// not the test's business (the verdict is tested in DoctorVerdictTests).
        func doctor(_ extra: [String] = [], json: Bool = true) throws -> (status: Int32, report: Report) {
            let now = ISO8601DateFormatter().string(from: Date())
            let result = try GateCommand.run(
                ["doctor"] + (json ? ["--json"] : []) + flags + extra, environment: GateRun.wallClock(now))
            return (result.status, Report(result.stdout, stderr: result.stderr))
        }
    }

    /// The checks of one `doctor --json`.
    struct Report: CustomStringConvertible {
        let checks: [(check: String, status: String, what: String)]
        let description: String

        init(_ stdout: String, stderr: String) {
            description = stdout + stderr
            let items = (try? TestJSON.parse(stdout))?["checks"]?.array ?? []
            checks = items.map {
                ($0["check"]?.string ?? "", $0["status"]?.string ?? "", $0["what"]?.string ?? "")
            }
        }

        func statuses(_ check: String) -> [String] { checks.filter { $0.check == check }.map(\.status) }

        func failed(_ check: String, containing text: String) -> Bool {
            checks.contains { $0.check == check && $0.status == "fail" && $0.what.contains(text) }
        }

        var failures: [String] { checks.filter { $0.status == "fail" }.map(\.check) }
    }

    @Test func aHealthyGatewayPasses() throws {
        let home = try Home(withAPI: true)
        let gate = try home.start()
        defer { gate.daemon.stop() }
        let (status, report) = try home.doctor()
        #expect(status == 0, "\(report)")
        #expect(report.failures.isEmpty, "\(report)")
        #expect(report.statuses("daemon") == ["ok"])
        #expect(report.statuses("listener") == ["ok", "ok", "ok"], "dns udp, dns tcp, proxy: \(report)")
        #expect(report.statuses("canary") == ["ok"], "\(report)")
        #expect(report.statuses("upstream") == ["ok"])
        #expect(report.statuses("api") == ["ok"], "\(report)")
        #expect(report.statuses("lists") == ["ok"])
        #expect(report.statuses("firewall") == ["skip"], "lan_interfaces is not set")
        #expect(report.statuses("clock") == ["skip"])
        #expect(report.statuses("router_advertisements") == ["skip"])
        #expect(home.upstream.queries(for: "a.root-servers.net").count >= 1, "the upstream was really asked")
        #expect(!gate.log.contains("blocked.phosra-gate.test"), "the canary is no hit")

        let text = try GateCommand.run(
            ["doctor"] + home.flags, environment: GateRun.wallClock(ISO8601DateFormatter().string(from: Date())))
        #expect(text.status == 0)
        #expect(text.lines.first?.hasPrefix("ok   daemon: phosra-gate run") == true, "\(text.stdout)")
        #expect(text.lines.contains { $0.hasPrefix("ok   canary: blocked.phosra-gate.test is blocked") })
    }

    @Test func theDaemonNotRunning() throws {
        let home = try Home()
        let (status, report) = try home.doctor()
        #expect(status == 1)
        #expect(report.failed("daemon", containing: "not running"), "\(report)")
        #expect(report.failed("listener", containing: "dns udp 127.0.0.1:\(home.port) does not answer"), "\(report)")
        #expect(report.statuses("upstream") == ["ok"], "the upstream is still asked: \(report)")
    }

    /// A wedged daemon: alive by its heartbeat, but its listeners do not answer.
    @Test func aListenerNotAnswering() throws {
        let home = try Home()
        let gate = try home.start()
        defer {
            gate.daemon.signal(SIGCONT)
            gate.daemon.stop()
        }
        let healthy = try waitFor(timeout: 10_000_000_000, interval: 250_000_000) { () throws -> Report? in
            let (status, report) = try home.doctor()
            return status == 0 ? report : nil
        }
        #expect(healthy != nil, "never healthy")
        gate.daemon.signal(SIGSTOP)
        let (status, report) = try home.doctor()
        #expect(status == 1)
        #expect(report.statuses("daemon") == ["ok"], "\(report)")
        #expect(report.failed("listener", containing: "dns udp 127.0.0.1:\(home.port) does not answer (timed out)"))
        #expect(report.failed("listener", containing: "dns tcp 127.0.0.1:\(home.port) does not answer"), "\(report)")
        #expect(report.statuses("canary") == ["skip"])
    }

    @Test func theUpstreamDead() throws {
        let home = try Home()
        let gate = try home.start()
        defer { gate.daemon.stop() }
        home.upstream.server.kill()
        let (status, report) = try home.doctor()
        #expect(status == 1)
        #expect(report.failed("upstream", containing: "\(home.upstream.spec) does not answer"), "\(report)")
        #expect(report.failures == ["upstream"], "\(report)")
    }

    @Test func theAPIDown() throws {
        let home = try Home(withAPI: true)
        let gate = try home.start()
        defer { gate.daemon.stop() }
        // Healthy first: the daemon's first heartbeat and answers may take a moment on a
        // loaded machine, so ask until it is (at most 10 s), then take the API away.
        let healthy = try waitFor(timeout: 10_000_000_000, interval: 250_000_000) { () throws -> Report? in
            let (status, report) = try home.doctor()
            return status == 0 ? report : nil
        }
        try #require(healthy != nil, "never healthy")
        home.api?.stop()
        let (status, report) = try home.doctor()
        #expect(status == 1)
        #expect(report.failed("api", containing: "the API did not answer"), "\(report)")
        #expect(report.failures == ["api"], "\(report)")
    }

    @Test func theKeyRevoked() throws {
        let home = try Home(withAPI: true)
        let gate = try home.start()
        defer { gate.daemon.stop() }
        let api = try #require(home.api)
        api.revokeDevice(try #require(api.devices.first).id)
        let (status, report) = try home.doctor()
        #expect(status == 1)
        #expect(report.failed("api", containing: "refuses this gateway's key"), "\(report)")
    }

    @Test func oldLists() throws {
        let home = try Home()
        let gate = try home.start()
        defer { gate.daemon.stop() }
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -8 * 86_400)],
            ofItemAtPath: home.scratch.path("lists/adult/list.txt"))
        let (status, report) = try home.doctor()
        #expect(status == 1)
        #expect(report.failed("lists", containing: "8 d ago"), "\(report)")
        #expect(report.failures == ["lists"], "\(report)")
    }
}

extension DoctorIntegrationTests {
    /// With `lan_interfaces` set, the table must be in the kernel and match the
    /// configuration: applied, removed, and applied before the configuration changed —
    /// in a network namespace of the test's own, where `doctor` runs too.
    @Test func theFirewallTable() throws {
        let home = try Home()
        let lan = try NetworkNamespaces.make(devices: 0)
        defer { lan.remove() }
        // The table redirects to the DNS port of a wildcard listener; nothing listens in
        // the namespace, which fails other checks but not this one.
        let flags =
            home.flags.map { $0 == "127.0.0.1:\(home.port)" ? "0.0.0.0:\(home.port)" : $0 } + [
                "--lan-interfaces", "pgtest0",
            ]
        func inNamespace(_ words: [String]) throws -> ProgramOutput {
            let command = try lan.exec(in: lan.gateway, [GateRun.binary] + words)
            return try Program.run(command.path, command.arguments)
        }
        func firewallLine(_ extra: [String] = []) throws -> (status: String, what: String) {
            let result = try inNamespace(["doctor", "--json"] + flags + extra)
            #expect(result.status == 1, "the daemon is not running in the namespace")
            let line = Report(result.stdout, stderr: result.stderr).checks.first { $0.check == "firewall" }
            return (line?.status ?? "none", line?.what ?? result.stdout + result.stderr)
        }

        #expect(
            try firewallLine() == (
                "fail", "table inet phosra_gate is missing: devices can use other DNS servers and go around"
            ))
        let applied = try inNamespace(["firewall", "apply"] + flags)
        try #require(applied.status == 0, "\(applied.stderr)")
        #expect(try firewallLine() == ("ok", "table inet phosra_gate is in place and matches the configuration"))
        let changed = try firewallLine(["--doh-addresses", "198.51.100.53"])
        #expect(changed.status == "fail" && changed.what.contains("out of date"), "\(changed)")
        let removed = try inNamespace(["firewall", "remove"])
        try #require(removed.status == 0, "\(removed.stderr)")
        #expect(try firewallLine().status == "fail")
    }
}
