import DNSUpstream
import DNSWire
import DomainMatch
import EventLoop
import Glibc
import SystemIO
import TestSupport
import Testing

/// Ordered failover, timeouts, the total budget, truncation and forged replies, against
/// fake upstreams on loopback (docs/dns.md#forwarding).
@Suite(.serialized, .blocking) struct FailoverTests {
    @Test func truncatedUDPReplyIsRetriedOverTCP() throws {
        try withHarness { harness throws in
            let fake = try FakeUpstream(on: harness.serverLoop, behavior: .truncateOverUDP)
            let outcome = try harness.resolve("big.example.test", upstreams: [upstream(fake.spec)])
            #expect(outcome.address == "192.0.2.7")
            #expect(fake.udpQueries.load(ordering: .relaxed) == 1)
            #expect(fake.tcpQueries.load(ordering: .relaxed) == 1)
        }
    }

    @Test func forgedRepliesAreDroppedAndTheWaitGoesOn() throws {
        try withHarness(timeout: 2_000_000_000, totalBudget: 3_000_000_000) { harness throws in
            let fake = try FakeUpstream(on: harness.serverLoop, behavior: .forgeFirst)
            let outcome = try harness.resolve("bank.example.test", upstreams: [upstream(fake.spec)])
            #expect(outcome.address == "192.0.2.7")
            // The genuine reply came 50 ms after the forged ones: they did not end the wait.
            #expect(outcome.elapsed >= 45_000_000)
        }
    }

    @Test func deadFirstUpstreamFailsOverToTheSecondAtOnce() throws {
        try withHarness { harness throws in
            let dead = upstream("127.0.0.1:\(try closedPort())")
            let fake = try FakeUpstream(on: harness.serverLoop, behavior: .answer(.noError))
            let outcome = try harness.resolve("example.test", upstreams: [dead, upstream(fake.spec)])
            #expect(outcome.address == "192.0.2.7")
            // ICMP port unreachable → ECONNREFUSED: no waiting for the timeout.
            #expect(outcome.elapsed < 400_000_000)
            let events = harness.events.value
            #expect(events.count == 1)
            #expect(events.first?.description.hasPrefix("upstream \(dead) failed: ") == true)
        }
    }

    @Test func silentFirstUpstreamTimesOutThenTheSecondAnswers() throws {
        try withHarness(timeout: 200_000_000) { harness throws in
            let silent = try FakeUpstream(on: harness.serverLoop, behavior: .silent)
            let fake = try FakeUpstream(
                on: harness.serverLoop, behavior: .answer(.noError), answer: RData.IPv4(192, 0, 2, 8))
            let outcome = try harness.resolve("example.test", upstreams: [upstream(silent.spec), upstream(fake.spec)])
            #expect(outcome.address == "192.0.2.8")
            #expect(outcome.elapsed >= 195_000_000 && outcome.elapsed < 1_000_000_000)
            #expect(harness.events.value == [.failed(upstream(silent.spec), .timedOut)])
        }
    }

    @Test(arguments: [DNSRcode.servFail, .refused])
    func servfailAndRefusedFailOver(rcode: DNSRcode) throws {
        try withHarness { harness throws in
            let failing = try FakeUpstream(on: harness.serverLoop, behavior: .answer(rcode))
            let fake = try FakeUpstream(
                on: harness.serverLoop, behavior: .answer(.noError), answer: RData.IPv4(192, 0, 2, 9))
            let outcome = try harness.resolve("example.test", upstreams: [upstream(failing.spec), upstream(fake.spec)])
            #expect(outcome.address == "192.0.2.9")
            #expect(harness.events.value == [.failed(upstream(failing.spec), .rcode(rcode))])
        }
    }

    @Test func nxdomainIsAnAnswerNotAFailure() throws {
        try withHarness { harness throws in
            let first = try FakeUpstream(on: harness.serverLoop, behavior: .answer(.nxDomain))
            let second = try FakeUpstream(on: harness.serverLoop, behavior: .answer(.noError))
            let outcome = try harness.resolve("nothing.test", upstreams: [upstream(first.spec), upstream(second.spec)])
            #expect(outcome.rcode == .nxDomain)
            #expect(second.udpQueries.load(ordering: .relaxed) == 0)
        }
    }

    @Test func allDeadIsNilWithinTheTotalBudget() throws {
        try withHarness(timeout: 300_000_000, totalBudget: 500_000_000) { harness throws in
            let silent = try (0..<3).map { _ in try FakeUpstream(on: harness.serverLoop, behavior: .silent) }
            let outcome = try harness.resolve("example.test", upstreams: silent.map { upstream($0.spec) })
            #expect(outcome.reply == nil)
            // Two attempts fit (300 ms, then the 200 ms left); the third is never started.
            #expect(outcome.elapsed >= 495_000_000 && outcome.elapsed < 900_000_000)
            #expect(silent.map { $0.udpQueries.load(ordering: .relaxed) } == [1, 1, 0])
        }
    }

    @Test func everyAttemptHasAFreshIDAndTheClientsFlags() throws {
        try withHarness(timeout: 150_000_000) { harness throws in
            let first = try FakeUpstream(on: harness.serverLoop, behavior: .silent)
            let second = try FakeUpstream(on: harness.serverLoop, behavior: .answer(.noError))
            _ = try harness.resolve(
                "example.test", dnssecOK: true, checkingDisabled: true,
                upstreams: [upstream(first.spec), upstream(second.spec)])
            let ids = first.queryIDs.withLock { $0 } + second.queryIDs.withLock { $0 }
            #expect(ids.count == 2)
            let sent = try DNSMessage.parse(second.lastQuery.withLock { $0 })
            #expect(sent.header.recursionDesired && sent.header.checkingDisabled)
            #expect(sent.edns?.dnssecOK == true && sent.edns?.udpPayloadSize == 1232)
        }
    }

    @Test func aFailureBurstIsReportedOnceAndTheRecoveryToo() throws {
        try withHarness(timeout: 100_000_000) { harness throws in
            let silent = try FakeUpstream(on: harness.serverLoop, behavior: .silent)
            let fake = try FakeUpstream(on: harness.serverLoop, behavior: .answer(.noError))
            let list = [upstream(silent.spec), upstream(fake.spec)]
            _ = try harness.resolveAll(["a.test", "b.test", "c.test"], upstreams: list)
            #expect(harness.events.value == [.failed(list[0], .timedOut)])
            silent.behavior = .answer(.noError)
            #expect(try harness.resolve("d.test", upstreams: list).address == "192.0.2.7")
            #expect(harness.events.value == [.failed(list[0], .timedOut), .recovered(list[0], failures: 3)])
        }
    }

    @Test func beyondTheInFlightBoundTheAnswerIsNilAtOnce() throws {
        try withHarness(timeout: 300_000_000, maxInFlight: 2) { harness throws in
            let silent = try FakeUpstream(on: harness.serverLoop, behavior: .silent)
            let outcomes = try harness.resolveAll(["a.test", "b.test", "c.test"], upstreams: [upstream(silent.spec)])
            #expect(outcomes.map { $0.reply == nil } == [true, true, true])
            #expect(outcomes[2].elapsed < 100_000_000)
            #expect(outcomes[0].elapsed >= 295_000_000)
            #expect(try harness.onLoop { $0.inFlight } == 0)
        }
    }

    @Test func anUpstreamThatCannotStartFailsButNeverInsideResolve() throws {
        try withHarness { harness throws in
            let order = Shared<[String]>([])
            let client = harness.client
            let question = DNSQuestion(name: try DNSName("example.test"), type: .a)
            let dot = upstream("tls://127.0.0.1:853#dot.test")  // and the client has no TLS context
            try harness.loop.runSync(timeout: testTimeout) {
                client.resolve(question, dnssecOK: false, checkingDisabled: false, upstreams: [dot]) { reply in
                    order.update { $0.append(reply == nil ? "nil" : "reply") }
                }
                order.update { $0.append("returned") }
            }
            #expect(waitUntil { order.value.count == 2 })
            #expect(order.value == ["returned", "nil"])
            #expect(harness.events.value == [.failed(dot, .unavailable("no TLS context for \(dot)"))])
        }
    }

    @Test func shutdownCompletesPendingResolutionsWithNil() throws {
        try withHarness { harness throws in
            let silent = try FakeUpstream(on: harness.serverLoop, behavior: .silent)
            let done = Shared<[Bool]>([])
            let client = harness.client
            let question = DNSQuestion(name: try DNSName("example.test"), type: .a)
            let list = [upstream(silent.spec), upstream("tcp://\(silent.spec)")]
            try harness.loop.runSync(timeout: testTimeout) {
                client.resolve(question, dnssecOK: false, checkingDisabled: false, upstreams: list) { reply in
                    done.update { $0.append(reply == nil) }
                }
                client.shutdown()
                client.resolve(question, dnssecOK: false, checkingDisabled: false, upstreams: list) { reply in
                    done.update { $0.append(reply == nil) }
                }
            }
            #expect(waitUntil { done.value.count == 2 })
            #expect(done.value == [true, true])
        }
    }
}
