import Foundation
import TestSupport
import Testing

/// The real daemon answering what it answers itself: blocks, local zones, refusals. The
/// upstream is a closed port, so any forwarding would show as SERVFAIL.
@Suite(.serialized, .blocking) struct LocalAnswersIntegrationTests {
    let scratch: ScratchDirectory
    let lists: String

    init() throws {
        scratch = try ScratchDirectory()
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        try scratch.write("lists/proxy/list.txt", "vpn.example\n")
        lists = scratch.path("lists")
    }

    private func start(_ policy: String, _ extra: [String] = [], wallClock: String? = nil) throws -> GateRun {
        let path = try scratch.write("policy-\(UUID().uuidString).json", policy)
        return try GateRun(
            ["--policy", path, "--lists", lists, "--upstream", "127.0.0.1:9"] + extra, scratch: scratch,
            environment: wallClock.map(GateRun.wallClock) ?? [:])
    }

    @Test func aBlockForEachReasonWithItsEDEText() throws {
        let gate = try start(PolicyDocuments.json(level: "strict", blocked: ["parent.example"]))
        for (name, text) in [
            ("www.parent.example", "blocked_domain:parent.example"), ("x.adult.example", "category:adult"),
            ("dns.google", "circumvention:dns.google"), ("vpn.example", "circumvention:vpn.example"),
        ] {
            let answer = try gate.dig(name)
            #expect(answer.status == "NXDOMAIN", "\(name)")
            #expect(answer.extendedErrors == ["15 (Blocked): (\(text))"], "\(name)")
            #expect(answer.authority.first?.contains("SOA") == true)
        }
        // At noon (the daemon's test clock): inside the downtime, outside the allowed hours.
        let downtime = try start(
            PolicyDocuments.json(screenTime: PolicyDocuments.downtime("11:57", "12:03")),
            wallClock: PolicyDocuments.noon)
        #expect(try downtime.dig("example.org").extendedErrors == ["15 (Blocked): (downtime)"])
        let schedule = try start(
            PolicyDocuments.json(
                screenTime:
                    #""schedule": {"weekday": {"start": "00:00", "end": "00:01"}, "weekend": {"start": "00:00", "end": "00:01"}}"#
            ),
            wallClock: PolicyDocuments.noon)
        #expect(try schedule.dig("example.org").extendedErrors == ["15 (Blocked): (schedule)"])
    }

    @Test func eachBlockMode() throws {
        let policy = PolicyDocuments.json(blocked: ["blocked.example"])
        let cases: [(String, String, String, [String])] = [
            ("nxdomain", "A", "NXDOMAIN", []), ("null", "A", "NOERROR", ["0.0.0.0"]),
            ("null", "AAAA", "NOERROR", ["::"]),
            ("null", "MX", "NOERROR", []), ("refused", "A", "REFUSED", []),
            ("ip:192.0.2.7,2001:db8::7", "A", "NOERROR", ["192.0.2.7"]),
            ("ip:192.0.2.7,2001:db8::7", "AAAA", "NOERROR", ["2001:db8::7"]),
        ]
        for (mode, type, status, data) in cases {
            let gate = try start(policy, ["--block-mode", mode, "--block-ttl", "42s"])
            let answer = try gate.dig("www.blocked.example", type)
            #expect(answer.status == status, "\(mode) \(type)")
            #expect(answer.answerData == data, "\(mode) \(type)")
            if !data.isEmpty { #expect(answer.answerTTLs == [42], "\(mode) \(type)") }
            #expect(answer.extendedErrors == ["15 (Blocked): (blocked_domain:blocked.example)"], "\(mode) \(type)")
        }
    }

    @Test func everyQueryTypeOfABlockedNameIsBlocked() throws {
        let gate = try start(PolicyDocuments.json(blocked: ["blocked.example"]))
        for type in [
            "A", "AAAA", "MX", "TXT", "HTTPS", "SVCB", "CNAME", "NS", "SRV", "PTR", "SOA", "CAA", "ANY", "TYPE65534",
        ] {
            let answer = try gate.dig("deep.sub.blocked.example", type)
            #expect(answer.status == "NXDOMAIN", "\(type): \(answer)")
        }
        #expect(try gate.dig("deep.sub.blocked.example", "A", ["+tcp"]).status == "NXDOMAIN")
        #expect(try gate.dig("deep.sub.blocked.example", "A", ["+noedns"]).extendedErrors.isEmpty)
    }

    @Test func localAnswersNeverReachTheUpstream() throws {
        let gate = try start(PolicyDocuments.json())
        #expect(try gate.dig("use-application-dns.net").status == "NXDOMAIN")
        let discovery = try gate.dig("_dns.resolver.arpa", "SVCB")
        #expect(discovery.status == "NOERROR" && discovery.answers.isEmpty)
        #expect(try gate.dig("_esni.example.com", "TXT").status == "NXDOMAIN")
        #expect(try gate.dig("1.0.168.192.in-addr.arpa", "PTR").status == "NXDOMAIN")
        #expect(try gate.dig("printer.home.arpa").status == "NXDOMAIN")
        #expect(try gate.dig("nas.lan").status == "NXDOMAIN")
        #expect(try gate.dig("tv.local").status == "NXDOMAIN")
        // The upstream is dead: a forwarded name fails, which shows the ones above never left.
        #expect(try gate.dig("example.org").status == "SERVFAIL")
    }

    @Test func clientsOutsideAllowClientsAreRefused() throws {
        let gate = try start(PolicyDocuments.json(), ["--allow-clients", "10.0.0.0/8"])
        let answer = try gate.dig("example.org")
        #expect(answer.status == "REFUSED")
        #expect(answer.extendedErrors.first?.hasPrefix("18 (Prohibited)") == true)
    }

    @Test func theRateLimitRefusesBeyondItsBurst() throws {
        let gate = try start(PolicyDocuments.json(blocked: ["blocked.example"]), ["--rate-limit", "5"])
        // From one socket, each as soon as the last is answered: twenty dig processes on a
        // busy machine can take long enough for the budget to refill between them.
        let rcodes = RawSockets.udpRcodes(
            (0..<20).map { RawSockets.query("blocked.example", id: UInt16(100 + $0)) }, port: gate.port)
        #expect(rcodes.filter { $0 == 3 }.count >= 10, "\(rcodes)")
        #expect(rcodes.contains(5), "\(rcodes)")
    }

    /// A client's budget is the run's: neither a new policy nor SIGHUP gives it a fresh
    /// burst. At 1 query/s (burst 2) a client that spent its budget gets at most one more
    /// answer within the second after a change; a budget reset by the change would give two.
    @Test func aClientsRateLimitHoldsAcrossAPolicySwapAndAReload() throws {
        let path = scratch.path("rate-policy.json")
        try PolicyDocuments.json(blocked: ["blocked.example"]).write(toFile: path, atomically: true, encoding: .utf8)
        let gate = try GateRun(
            ["--policy", path, "--lists", lists, "--upstream", "127.0.0.1:9", "--rate-limit", "1"], scratch: scratch)
        defer { gate.daemon.stop() }
        let nxdomain = 3
        let refused = 5
        func queries(_ count: Int) -> [[UInt8]] {
            (0..<count).map { RawSockets.query("blocked.example", id: UInt16($0 + 1)) }
        }
        func occurrences(_ text: String) -> Int { gate.log.occurrences(of: text) }
        /// The answers of three queries sent right after `change`, once the budget is spent:
        /// nil when the change took a second or more (then the bucket refills honestly).
        func answeredRightAfter(_ change: () throws -> Void) rethrows -> Int? {
            for _ in 0..<3 {
                let spent = RawSockets.udpRcodes(queries(6), port: gate.port)
                #expect(spent.suffix(3).allSatisfy { $0 == refused }, "\(spent)")
                let start = Date()
                try change()
                let probe = RawSockets.udpRcodes(queries(3), port: gate.port)
                // Slower than that (a loaded machine), the round says nothing: the next
                // spends the budget again first.
                if Date().timeIntervalSince(start) < 0.9 { return probe.filter { $0 == nxdomain }.count }
            }
            return nil
        }
        let swapped = try answeredRightAfter {
            let before = occurrences("event=policy_loaded")
            let next = scratch.path("rate-next.json")
            try PolicyDocuments.json(blocked: ["blocked.example"], version: 2).write(
                toFile: next, atomically: false, encoding: .utf8)
            #expect(rename(next, path) == 0)
            #expect(
                waitUntil(timeout: 2_000_000_000, interval: 5_000_000) { occurrences("event=policy_loaded") > before })
        }
        #expect(swapped != nil && swapped! <= 1, "answers right after a policy swap: \(String(describing: swapped))")
        let reloaded = answeredRightAfter {
            let before = occurrences("event=reloaded")
            gate.daemon.signal(SIGHUP)
            #expect(waitUntil(timeout: 2_000_000_000, interval: 5_000_000) { occurrences("event=reloaded") > before })
        }
        #expect(reloaded != nil && reloaded! <= 1, "answers right after SIGHUP: \(String(describing: reloaded))")
    }

    @Test func aSecondInstanceOnTheSameStateDirectoryIsRefused() throws {
        let gate = try start(PolicyDocuments.json())
        let path = try scratch.write("p2.json", PolicyDocuments.json())
        let second = try ChildDaemon(
            GateRun.binary,
            [
                "run", "--policy", path, "--lists", lists, "--upstream", "127.0.0.1:9",
                "--dns-listen", "127.0.0.1:\(FreePort.tcpAndUDP())",
                "--state-dir", gate.stateDirectory,
            ])
        #expect(second.waitForExit() == 1)
        #expect(second.stderr.contains("is in use by another phosra-gate (pid \(gate.daemon.pid))"))
    }

    @Test func aPolicyReplacedByRenameIsEnforcedWithinTwoSeconds() throws {
        let path = scratch.path("live-policy.json")
        try PolicyDocuments.json().write(toFile: path, atomically: true, encoding: .utf8)
        let gate = try GateRun(["--policy", path, "--lists", lists, "--upstream", "127.0.0.1:9"], scratch: scratch)
        #expect(try gate.dig("newly.example").status == "SERVFAIL")
        let next = scratch.path("next.json")
        try PolicyDocuments.json(blocked: ["newly.example"], version: 2).write(
            toFile: next, atomically: false, encoding: .utf8)
        #expect(rename(next, path) == 0)
        let (enforced, seconds) = timed {
            waitUntil(timeout: 2_000_000_000, interval: digInterval) {
                (try? gate.dig("newly.example").status) == "NXDOMAIN"
            }
        }
        #expect(enforced, "the renamed policy enforced within 2 s (waited \(seconds) s)")
        // A broken file keeps the last good policy.
        try "{ not json".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(gate.daemon.waitFor("event=policy_rejected", timeout: 3))
        #expect(try gate.dig("newly.example").status == "NXDOMAIN")
    }
}
