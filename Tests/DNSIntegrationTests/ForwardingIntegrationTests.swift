import EventLoop
import Foundation
import SystemIO
import TestSupport
import Testing

/// The real daemon forwarding to real upstreams on loopback (docs/dns.md#forwarding): dnsmasq
/// started by each test, whose query log shows what reached it.
@Suite(.serialized, .blocking) struct ForwardingIntegrationTests {
    let fixture: UpstreamFixture

    init() throws { fixture = try UpstreamFixture() }

    @Test func anAllowedNameIsForwardedThenAnsweredFromTheCacheWithADecrementedTTL() throws {
        let upstream = try DnsmasqUpstream(["--address=/example.test/192.0.2.1"], localTTL: 300)
        let gate = try fixture.start(PolicyDocuments.json(), upstream: upstream.spec)

        let first = try gate.dig("www.example.test")
        #expect(first.status == "NOERROR", "\(first)")
        #expect(first.answerData == ["192.0.2.1"])
        #expect(first.answerTTLs == [300])
        #expect(first.extendedErrors.isEmpty)

        // The daemon's clock, not ours, ages the entry: ask until a second has passed for it.
        let second = try #require(
            try waitForAnswer(gate, "www.example.test") { ($0.answerTTLs.first ?? 300) < 300 },
            "from the cache the TTL counts down")
        #expect(second.answerData == ["192.0.2.1"])
        let ttl = try #require(second.answerTTLs.first)
        #expect(ttl < 300 && ttl >= 290, "from the cache the TTL counts down: \(ttl)")
        // The cache serves TCP clients and any letter case from the same entry.
        #expect(try gate.dig("www.example.test", "A", ["+tcp"]).answerData == ["192.0.2.1"])
        let mixedCase = try gate.dig("WWW.Example.TEST")
        #expect(mixedCase.answerData == ["192.0.2.1"])
        #expect(mixedCase.output.contains(";WWW.Example.TEST."), "the question as asked: \(mixedCase)")

        #expect(
            try upstream.settledQueries(for: "www.example.test").count == 1,
            "one upstream query only: \(upstream.queries)")
    }

    @Test func anAnswerTooLargeForTheClientsUDPSizeIsTruncatedAndWholeOverTCP() throws {
        // 3 × 200-octet TXT records: ~700 octets, over 512 (no EDNS) but within 1232.
        let upstream = try DnsmasqUpstream(txtRecords("mid.example.test", count: 3), localTTL: 300)
        let gate = try fixture.start(PolicyDocuments.json(), upstream: upstream.spec)

        let plain = try gate.dig("mid.example.test", "TXT", ["+noedns", "+ignore"])
        #expect(plain.status == "NOERROR", "\(plain)")
        #expect(plain.flags.contains("tc"), "TC over UDP without EDNS: \(plain)")
        #expect(plain.answers.count < 3)

        let overTCP = try gate.dig("mid.example.test", "TXT", ["+tcp"])
        #expect(!overTCP.flags.contains("tc"))
        #expect(overTCP.answers.count == 3, "\(overTCP)")
        #expect(overTCP.answerData.allSatisfy { $0.contains(String(repeating: "x", count: 198)) })

        let withEDNS = try gate.dig("mid.example.test", "TXT", ["+ignore"])
        #expect(!withEDNS.flags.contains("tc"), "fits the 1232 octets of EDNS: \(withEDNS)")
        #expect(withEDNS.answers.count == 3)
        #expect(upstream.queries(for: "mid.example.test").count == 1)
    }

    @Test func anUpstreamThatTruncatesIsAskedAgainOverTCP() throws {
        // 10 × 200-octet TXT records: ~2,200 octets; dnsmasq truncates it over UDP even
        // with phosra-gate's EDNS size of 1232, and answers it whole over TCP.
        let upstream = try DnsmasqUpstream(txtRecords("big.example.test", count: 10), localTTL: 300)
        let direct = try Dig.query(
            "big.example.test", "TXT", port: upstream.port, options: ["+ignore", "+bufsize=1232"])
        #expect(direct.flags.contains("tc"), "the premise: dnsmasq truncates over UDP: \(direct)")
        let gate = try fixture.start(PolicyDocuments.json(), upstream: upstream.spec)

        let overTCP = try gate.dig("big.example.test", "TXT", ["+tcp"])
        #expect(overTCP.status == "NOERROR", "\(overTCP)")
        #expect(!overTCP.flags.contains("tc"))
        #expect(overTCP.answers.count == 10, "the whole answer: \(overTCP)")
        #expect(Set(overTCP.answerData).count == 10)

        // Over UDP the client gets TC (with and without EDNS), then the whole answer over TCP.
        #expect(try gate.dig("big.example.test", "TXT", ["+noedns", "+ignore"]).flags.contains("tc"))
        #expect(try gate.dig("big.example.test", "TXT", ["+ignore"]).flags.contains("tc"))
        #expect(try gate.dig("big.example.test", "TXT").answers.count == 10, "dig's own retry over TCP")

        // Upstream: once over UDP (answered by dnsmasq's main process, truncated), once
        // over TCP (a forked child per connection); the rest came from the cache.
        let queries = upstream.waitForQueries("big.example.test", count: 3, timeout: 0.5)
        #expect(queries.count == 3, "dig's direct query, then phosra-gate's UDP and TCP: \(queries)")
        if queries.count == 3 {
            #expect(queries[1].pid == upstream.mainPID, "UDP first")
            #expect(queries[2].pid != upstream.mainPID, "then TCP")
        }
    }

    @Test func upstreamsAreTriedInOrderAndADeadOneIsSkipped() throws {
        let first = try DnsmasqUpstream(["--address=/example.test/192.0.2.1"])
        // Not an address of the test host's (192.0.2.2 may be one): answers lose the
        // gateway's own addresses (docs/dns.md#what-answers-may-carry).
        let second = try DnsmasqUpstream([
            "--address=/example.test/203.0.113.2", "--address=/only-second.test/192.0.2.22",
        ])
        let dead = FreePort.tcpAndUDP()

        // Both alive: the first one answers, the second is never asked.
        let ordered = try fixture.start(PolicyDocuments.json(), upstream: "\(first.spec),\(second.spec)")
        #expect(try ordered.dig("a.example.test").answerData == ["192.0.2.1"])
        // REFUSED from the first (dnsmasq has no data for the name) fails over to the second.
        #expect(try ordered.dig("x.only-second.test").answerData == ["192.0.2.22"])
        #expect(try second.settledQueries(for: "a.example.test").isEmpty)
        #expect(try first.settledQueries(for: "x.only-second.test").count == 1)

        // SERVFAIL from the first fails over too.
        let failing = try FakeUDPUpstream { query in [.send(FakeDNS.reply(to: query, addresses: [], rcode: 2))] }
        let afterServfail = try fixture.start(PolicyDocuments.json(), upstream: "\(failing.spec),\(second.spec)")
        #expect(try afterServfail.dig("c.example.test").answerData == ["203.0.113.2"])
        #expect(failing.queries.count == 1)

        // A closed port first: answered by the live one, at once (ICMP port unreachable).
        let afterDead = try fixture.start(PolicyDocuments.json(), upstream: "127.0.0.1:\(dead),\(second.spec)")
        let (answer, seconds) = try timed { try afterDead.dig("b.example.test") }
        #expect(answer.status == "NOERROR", "\(answer)")
        #expect(answer.answerData == ["203.0.113.2"])
        #expect(seconds < 1.5, "took \(seconds) s")
    }

    @Test func aSilentUpstreamIsGivenUpAfterItsTimeout() throws {
        let silent = try FakeUDPUpstream { _ in [] }
        let live = try DnsmasqUpstream(["--address=/example.test/192.0.2.1"])
        let gate = try fixture.start(PolicyDocuments.json(), upstream: "\(silent.spec),\(live.spec)")
        let (answer, seconds) = try timed { try gate.dig("www.example.test") }
        #expect(answer.answerData == ["192.0.2.1"], "\(answer)")
        #expect(seconds >= 0.7 && seconds < 2.0, "after the 800 ms upstream_timeout: \(seconds) s")
        #expect(silent.queries.count == 1)
    }

    @Test func allUpstreamsDeadIsSERVFAILWithinTheBudget() throws {
        // Closed ports: every attempt fails at once.
        let closed = try fixture.start(
            PolicyDocuments.json(),
            upstream: "127.0.0.1:\(FreePort.tcpAndUDP()),127.0.0.1:\(FreePort.tcpAndUDP())")
        let (refused, refusedSeconds) = try timed { try closed.dig("www.example.test") }
        #expect(refused.status == "SERVFAIL", "\(refused)")
        #expect(refusedSeconds < 2.5)
        for error in refused.extendedErrors { #expect(error.hasPrefix("22 "), "\(error)") }

        // Black holes: 800 ms each, all within the 2 s total.
        let holes = try (0..<3).map { _ in try FakeUDPUpstream { _ in [] } }
        let silent = try fixture.start(PolicyDocuments.json(), upstream: holes.map(\.spec).joined(separator: ","))
        let (answer, seconds) = try timed { try silent.dig("www.example.test") }
        #expect(answer.status == "SERVFAIL", "\(answer)")
        #expect(seconds >= 1.5 && seconds < 2.5, "SERVFAIL after \(seconds) s")
        for error in answer.extendedErrors { #expect(error == "22 (No Reachable Authority): (no upstream answered)") }
        #expect(holes[0].queries.count == 1 && holes[1].queries.count == 1)
        #expect(holes[2].queries.count <= 1, "the third gets what is left of the budget")
    }

    @Test func aStaleAnswerIsServedWhenTheUpstreamWasKilled() throws {
        let upstream = try DnsmasqUpstream(["--address=/example.test/192.0.2.1"], localTTL: 1)
        let gate = try fixture.start(PolicyDocuments.json(), upstream: upstream.spec, ["--serve-stale-max", "2s"])
        let (fresh, cachedBy) = (try gate.dig("www.example.test"), SystemClock().now())
        #expect(fresh.answerData == ["192.0.2.1"], "\(fresh)")
        #expect(fresh.answerTTLs == [1])
        upstream.kill()

        // Fresh from the cache for up to a second more; once it has expired, stale at once
        // (the dead upstream's port refuses at once). Only that last dig is timed.
        let (stale, seconds) = try #require(
            try waitForTimedAnswer(gate, "www.example.test") { !$0.extendedErrors.isEmpty },
            "a stale answer once the TTL of 1 s has passed")
        #expect(stale.status == "NOERROR", "\(stale)")
        #expect(stale.answerData == ["192.0.2.1"])
        #expect(stale.answerTTLs == [30], "RFC 8767's stale TTL")
        #expect(stale.extendedErrors == ["3 (Stale Answer)"])
        #expect(seconds < 2.0, "took \(seconds) s")
        // Without EDNS the stale answer carries no OPT, so no EDE.
        let plain = try gate.dig("www.example.test", "A", ["+noedns"])
        #expect(plain.answerData == ["192.0.2.1"] && plain.extendedErrors.isEmpty)

        #expect(try gate.dig("never-cached.example.test").status == "SERVFAIL")

        // serve_stale_max (2 s here) past its expiry (1 s), a stale copy is no longer served.
        let tooOld = try #require(
            try waitForAnswer(gate, "www.example.test") { $0.status != "NOERROR" },
            "no stale copy once serve_stale_max has passed")
        let served = TimeInterval(SystemClock().now() - cachedBy) / 1e9
        #expect(tooOld.status == "SERVFAIL", "\(tooOld)")
        #expect(tooOld.answers.isEmpty)
        #expect(served > 2.5, "stale copies were served until 1 s + 2 s after caching, not just \(served) s")
    }

    @Test func aStaleAnswerIsServedAfterOnePointEightSecondsWhenTheUpstreamIsSlow() throws {
        // Answers the first query (TTL 1), then goes silent.
        let answered = Counter()
        let upstream = try FakeUDPUpstream { query in
            answered.increment() == 1 ? [.send(FakeDNS.reply(to: query, addresses: ["192.0.2.5"], ttl: 1))] : []
        }
        // An upstream timeout beyond the 1.8 s of RFC 8767, so the stale timer decides.
        let gate = try fixture.start(PolicyDocuments.json(), upstream: upstream.spec, ["--upstream-timeout", "5s"])
        #expect(try gate.dig("www.example.test").answerData == ["192.0.2.5"])
        // From the cache at once until its TTL of 1 s has passed; then the upstream is
        // silent and the stale copy comes after 1.8 s. Only that last dig is timed.
        let (stale, seconds) = try #require(
            try waitForTimedAnswer(gate, "www.example.test") { !$0.extendedErrors.isEmpty },
            "a stale answer once the TTL has passed")
        #expect(stale.answerData == ["192.0.2.5"], "\(stale)")
        #expect(stale.answerTTLs == [30])
        #expect(stale.extendedErrors == ["3 (Stale Answer)"])
        #expect(seconds >= 1.6 && seconds < 2.5, "stale after \(seconds) s")
    }

    @Test func aForgedReplyWithAWrongIDIsIgnored() throws {
        let upstream = try FakeUDPUpstream { query in
            let id = FakeDNS.id(of: query)
            return [
                .send(FakeDNS.reply(to: query, addresses: ["192.0.2.66"], id: id &+ 1)),
                .pause(milliseconds: 50),
                .send(FakeDNS.reply(to: query, addresses: ["192.0.2.7"])),
            ]
        }
        let gate = try fixture.start(PolicyDocuments.json(), upstream: upstream.spec)
        let answer = try gate.dig("www.example.test")
        #expect(answer.status == "NOERROR", "\(answer)")
        #expect(answer.answerData == ["192.0.2.7"])
        #expect(upstream.queries.count == 1, "the forged reply neither ended the wait nor caused a retry")
        // And the forged address was not cached either.
        #expect(try gate.dig("www.example.test").answerData == ["192.0.2.7"])
        #expect(upstream.queries.count == 1)
    }

    @Test func otherForgedRepliesAreIgnoredToo() throws {
        let upstream = try FakeUDPUpstream { query in
            [
                .send(FakeDNS.reply(to: query, addresses: ["192.0.2.66"], questionName: "evil.example.test")),
                .sendFromOtherPort(FakeDNS.reply(to: query, addresses: ["192.0.2.67"])),
                .send(FakeDNS.reply(to: query, addresses: ["192.0.2.68"], isResponse: false)),
                .send(Array(FakeDNS.reply(to: query, addresses: ["192.0.2.69"]).prefix(11))),
                .pause(milliseconds: 50),
                .send(FakeDNS.reply(to: query, addresses: ["192.0.2.7"])),
            ]
        }
        let gate = try fixture.start(PolicyDocuments.json(), upstream: upstream.spec)
        let answer = try gate.dig("www.example.test")
        #expect(answer.answerData == ["192.0.2.7"], "\(answer)")
        #expect(upstream.queries.count == 1)

        // Only forgeries: nothing usable arrives, so after the timeout it is SERVFAIL.
        let forger = try FakeUDPUpstream { query in
            [
                .send(FakeDNS.reply(to: query, addresses: ["192.0.2.66"], id: FakeDNS.id(of: query) ^ 0x5A5A)),
                .sendFromOtherPort(FakeDNS.reply(to: query, addresses: ["192.0.2.67"])),
            ]
        }
        let fooled = try fixture.start(PolicyDocuments.json(), upstream: forger.spec)
        let failed = try fooled.dig("www.example.test")
        #expect(failed.status == "SERVFAIL", "\(failed)")
        #expect(failed.answers.isEmpty)
    }

    @Test func localForwardSendsItsZoneToItsServerAndOtherPrivateZonesStayLocal() throws {
        let upstream = try DnsmasqUpstream([
            "--address=/lan/192.0.2.99", "--address=/home.arpa/192.0.2.98",
            "--address=/example.test/192.0.2.1",
        ])
        let local = try DnsmasqUpstream(["--host-record=nas.lan,192.168.1.10", "--address=/home.arpa/192.0.2.97"])
        let gate = try fixture.start(
            PolicyDocuments.json(), upstream: upstream.spec,
            ["--local-forward", "lan=\(local.spec)"])

        let nas = try gate.dig("nas.lan")
        #expect(nas.status == "NOERROR", "\(nas)")
        #expect(nas.answerData == ["192.168.1.10"], "from the local_forward server")
        let printer = try gate.dig("printer.home.arpa")
        #expect(printer.status == "NXDOMAIN", "\(printer)")
        #expect(printer.answers.isEmpty)
        #expect(try gate.dig("tv.local").status == "NXDOMAIN")
        #expect(try gate.dig("www.example.test").answerData == ["192.0.2.1"], "other names still go upstream")

        #expect(try local.settledQueries().map(\.name) == ["nas.lan"], "\(local.queries)")
        #expect(try upstream.settledQueries().map(\.name) == ["www.example.test"], "\(upstream.queries)")
    }
}
