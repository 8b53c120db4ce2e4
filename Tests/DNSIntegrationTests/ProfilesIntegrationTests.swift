import Foundation
import Glibc
import TestSupport
import Testing

/// Several profiles on one gateway (docs/configuration.md#profiles), told apart by the
/// client's address: the real daemon, real `dig` from different loopback source
/// addresses, a real dnsmasq upstream. (By MAC and over IPv6 privacy addresses: the
/// namespace test.)
@Suite(.serialized, .blocking) struct ProfilesIntegrationTests {
    let fixture: UpstreamFixture
    let upstream: DnsmasqUpstream

    init() throws {
        fixture = try UpstreamFixture()
        upstream = try DnsmasqUpstream(
            ["--host-record=www.reddit.com,192.0.2.21", "--host-record=games.example,192.0.2.22"])
    }

    /// `kid` (127.0.0.2, and everything in 127.0.0.0/29 but the more specific entries),
    /// `teen` (127.0.0.3), anyone else `default_profile`.
    func configuration(
        kidClients: String = "127.0.0.2, 127.0.0.0/29", defaultProfile: String = "none"
    ) throws
        -> String
    {
        let kid = try fixture.scratch.write(
            "kid.json", PolicyDocuments.json(blocked: ["reddit.com", "games.example"], version: 4))
        let teen = try fixture.scratch.write("teen.json", PolicyDocuments.json(blocked: ["games.example"], version: 7))
        return """
            default_profile = \(defaultProfile)
            [profile kid]
            clients = \(kidClients)
            policy = \(kid)
            [profile teen]
            clients = 127.0.0.3
            policy = \(teen)
            """
    }

    func start(_ configuration: String) throws -> (GateRun, String) {
        let path = try fixture.scratch.write("phosra-gate.conf", configuration)
        let gate = try GateRun(
            ["--config", path, "--lists", fixture.lists, "--upstream", upstream.spec], scratch: fixture.scratch)
        return (gate, path)
    }

    func ask(_ gate: GateRun, _ name: String, from source: String) throws -> DigAnswer {
        try gate.dig(name, "A", ["-b", source])
    }

    @Test func eachClientGetsItsProfilesAnswer() throws {
        let (gate, path) = try start(try configuration())
        defer { gate.daemon.stop() }
        #expect(
            try ask(gate, "www.reddit.com", from: "127.0.0.2").extendedErrors == [
                "15 (Blocked): (blocked_domain:reddit.com)"
            ])
        // 127.0.0.4 is in kid's 127.0.0.0/29; 127.0.0.3 is teen's own, the longer match.
        #expect(
            try ask(gate, "games.example", from: "127.0.0.4").extendedErrors == [
                "15 (Blocked): (blocked_domain:games.example)"
            ])
        #expect(try ask(gate, "www.reddit.com", from: "127.0.0.3").answerData == ["192.0.2.21"])
        #expect(
            try ask(gate, "games.example", from: "127.0.0.3").extendedErrors == [
                "15 (Blocked): (blocked_domain:games.example)"
            ])
        // Outside every profile: default_profile = none, unfiltered but for circumvention.
        #expect(try ask(gate, "games.example", from: "127.0.0.9").answerData == ["192.0.2.22"])
        #expect(
            try ask(gate, "dns.google", from: "127.0.0.9").extendedErrors == [
                "15 (Blocked): (circumvention:dns.google)"
            ])
        // Hits land under the profile that was decided for.
        gate.daemon.signal(SIGTERM)
        #expect(gate.daemon.waitForExit() == 0)
        let kidHits = try GateCommand.run(["hits", "--state-dir", gate.stateDirectory, "--profile", "kid", "--json"])
        #expect(kidHits.stdout.contains(#""domain":"www.reddit.com""#), "\(kidHits.stdout)\(kidHits.stderr)")
        #expect(kidHits.stdout.contains(#""domain":"games.example""#))
        let teenHits = try GateCommand.run(["hits", "--state-dir", gate.stateDirectory, "--profile", "teen", "--json"])
        #expect(!teenHits.stdout.contains("reddit"))
        #expect(teenHits.stdout.contains(#""domain":"games.example""#))
        // `status` names the devices each profile served, `none` included.
        let status = try GateCommand.run(["status", "--config", path, "--state-dir", gate.stateDirectory, "--json"])
        let json = try TestJSON.parse(Array(status.stdout.utf8))
        var devices: [String: [String]] = [:]
        for profile in json["profiles"]?.array ?? [] {
            devices[profile["profile"]?.string ?? "?"] =
                (profile["devices_last_hour"]?.array ?? []).compactMap { $0["client"]?.string }.sorted()
        }
        #expect(
            devices == ["kid": ["127.0.0.2", "127.0.0.4"], "teen": ["127.0.0.3"], "none": ["127.0.0.9"]],
            "\(status.stdout)\(status.stderr)")
        let kid = json["profiles"]?.array?.first { $0["profile"]?.string == "kid" }
        #expect(kid?["devices_last_hour"]?[0]?["queries"]?.int == 1)
        let text = try GateCommand.run(["status", "--config", path, "--state-dir", gate.stateDirectory])
        #expect(text.stdout.contains("2 devices seen in the last hour:\n"), "\(text.stdout)")
        let teenLine = text.stdout.split(separator: "\n").first { $0.hasPrefix("    127.0.0.3, last seen ") }
        #expect(teenLine?.hasSuffix(" s ago, 2 queries") == true, "\(text.stdout)")
    }

    @Test func sighupMovesADeviceWithoutARestart() throws {
        let (gate, path) = try start(try configuration())
        defer { gate.daemon.stop() }
        #expect(try ask(gate, "www.reddit.com", from: "127.0.0.2").extendedErrors.count == 1)
        let pid = gate.daemon.pid
        // kid now covers 127.0.0.5 alone: 127.0.0.2 falls to the new default, `teen`.
        try Data(try configuration(kidClients: "127.0.0.5", defaultProfile: "teen").utf8)
            .write(to: URL(fileURLWithPath: path))
        gate.daemon.signal(SIGHUP)
        let after = try waitFor(interval: digInterval) { () throws -> DigAnswer? in
            let answer = try ask(gate, "www.reddit.com", from: "127.0.0.2")
            return answer.answerData == ["192.0.2.21"] ? answer : nil
        }
        #expect(after != nil, "127.0.0.2 still blocked after SIGHUP:\n\(gate.log)")
        #expect(try ask(gate, "www.reddit.com", from: "127.0.0.5").extendedErrors.count == 1)
        #expect(gate.daemon.pid == pid)
        #expect(gate.log.contains("event=reloaded"))
    }

    @Test func aConfigurationWithoutDefaultProfileIsRefused() throws {
        let path = try fixture.scratch.write(
            "bad.conf", "[profile kid]\nclients = 127.0.0.2\npolicy = \(fixture.scratch.path("kid.json"))\n")
        let run = try GateCommand.run(["run", "--config", path, "--state-dir", fixture.scratch.path("bad-state")])
        #expect(run.status == 1)
        #expect(
            run.stderr.contains("default_profile: must be set when profiles list clients or proxy users"),
            "\(run.stderr)")
    }

    @Test func checkDecidesAsAClientWouldBeDecided() throws {
        let path = try fixture.scratch.write("check.conf", try configuration())
        func check(_ flags: [String]) throws -> ProgramOutput {
            try GateCommand.run(
                ["check", "--config", path, "--lists", fixture.lists, "--state-dir", fixture.scratch.path("check")]
                    + flags + ["www.reddit.com"])
        }
        let kid = try check(["--client", "127.0.0.2"])
        #expect(kid.stdout.hasPrefix("www.reddit.com: block blocked_domain:reddit.com"), "\(kid.stdout)\(kid.stderr)")
        #expect(kid.stderr.contains("profile: kid (by address 127.0.0.2)"))
        let teen = try check(["--profile", "teen"])
        #expect(teen.stdout.hasPrefix("www.reddit.com: allow"), "\(teen.stdout)")
        let stranger = try check(["--client", "198.51.100.7"])
        #expect(stranger.stderr.contains("profile: none (by default_profile)"))
        let unknown = try check(["--profile", "mallory"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no profile \"mallory\" (kid, teen, none)"))
    }
}
