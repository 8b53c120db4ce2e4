import DNSUpstream
import DNSWire
import DomainMatch
import TestSupport
import Testing

/// The pooled TCP connection's life: reuse, the server closing it, retry on a new one.
@Suite(.serialized, .blocking) struct StreamConnectionTests {
    @Test func aQueryCaughtByTheServersCloseIsSentAgainOnANewConnection() throws {
        try withHarness { harness throws in
            let fake = try FakeUpstream(on: harness.serverLoop, behavior: .closeTCP(after: 1))
            let list = [upstream("tcp://\(fake.spec)")]
            #expect(try harness.resolve("one.example.test", upstreams: list).address == "192.0.2.7")
            // The second query reaches the kept connection, which the server closes unanswered.
            #expect(try harness.resolve("two.example.test", upstreams: list).address == "192.0.2.7")
            #expect(try harness.onLoop { $0.streamConnectsStarted } == 2)
            #expect(fake.tcpQueries.load(ordering: .relaxed) == 3)
            #expect(harness.events.value.isEmpty)
        }
    }

    @Test func aConnectionClosedBeforeAnyAnswerFailsOver() throws {
        try withHarness { harness throws in
            let closing = try FakeUpstream(on: harness.serverLoop, behavior: .closeTCP(after: 0))
            let fake = try FakeUpstream(
                on: harness.serverLoop, behavior: .answer(.noError), answer: RData.IPv4(192, 0, 2, 9))
            let list = [upstream("tcp://\(closing.spec)"), upstream("tcp://\(fake.spec)")]
            #expect(try harness.resolve("example.test", upstreams: list).address == "192.0.2.9")
            #expect(harness.events.value == [.failed(list[0], .connectionClosed)])
            #expect(try harness.onLoop { $0.streamConnectsStarted } == 2)
        }
    }

    @Test func aRefusedTCPConnectFailsOverWithTheErrno() throws {
        try withHarness { harness throws in
            let dead = upstream("tcp://127.0.0.1:\(FreePort.tcpAndUDP())")
            let fake = try FakeUpstream(on: harness.serverLoop, behavior: .answer(.noError))
            let outcome = try harness.resolve("example.test", upstreams: [dead, upstream(fake.spec)])
            #expect(outcome.address == "192.0.2.7")
            #expect(outcome.elapsed < 400_000_000)
            #expect(
                harness.events.value.map(\.description) == [
                    "upstream \(dead) failed: connect(127.0.0.1:\(dead.server.port)): Connection refused"
                ])
        }
    }

    @Test func anIdleConnectionIsClosedAfterTheIdleTimeout() throws {
        try withHarness(idleTimeout: 100_000_000) { harness throws in
            let fake = try FakeUpstream(on: harness.serverLoop, behavior: .answer(.noError))
            #expect(
                try harness.resolve("example.test", upstreams: [upstream("tcp://\(fake.spec)")]).address == "192.0.2.7")
            #expect(try harness.onLoop { $0.openStreamConnections } == 1)
            #expect(waitUntil(timeout: 2_000_000_000) { (try? harness.onLoop { $0.openStreamConnections }) == 0 })
        }
    }
}
