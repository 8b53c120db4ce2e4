import EventLoop
import Foundation
import SystemIO
import TestSupport
import Testing

/// How long a tunnel lives (docs/proxy.md#connect): half-close both ways, `tunnel_idle`, and
/// open tunnels closed within a second when a cutoff begins or a new policy blocks their
/// host — recorded as hits of the proxy.
@Suite(.serialized, .blocking) struct TunnelLifetimeIntegrationTests {
    let fixture: ProxyFixture

    init() throws { fixture = try ProxyFixture() }

    @Test func halfCloseIsRespectedBothWays() throws {
        let origin = try RawOrigin(replyAfterEOF: true)
        let gate = try fixture.start(connectPorts: [origin.port])
        let client = try fixture.tunnel(to: "origin.test", port: origin.port)
        client.send("hello")
        client.shutdownWrite()
        // The origin saw our FIN after the five bytes and still answered us.
        let reply = String(decoding: client.readToEnd() ?? [], as: UTF8.self)
        #expect(reply == "got 5 bytes\n")
        #expect(origin.received() == Array("hello".utf8))
        _ = gate
    }

    /// A relay that let Nagle hold back a small write until the previous one is acked
    /// would stall a response written in two parts by a delayed ACK (~40 ms): both tunnel
    /// sockets are TCP_NODELAY.
    @Test func aResponseInTwoSmallWritesIsNotHeldBack() throws {
        let origin = try TestHTTPServer { _ in
            .rawParts(
                [Array("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n".utf8), [0x41]],
                pause: .milliseconds(2), close: false)
        }
        let gate = try fixture.start(connectPorts: [origin.port])
        let client = try fixture.tunnel(to: "origin.test", port: origin.port)
        var times: [TimeInterval] = []
        for _ in 0..<20 {
            let (answer, seconds) = timed { () -> String in
                client.send("GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n")
                return client.read(until: "\r\n\r\nA")
            }
            #expect(answer.hasSuffix("\r\n\r\nA"))
            times.append(seconds)
        }
        let median = times.sorted()[times.count / 2]
        #expect(median < 0.02, "median exchange \(median) s (a Nagle stall is ~40 ms)")
        _ = gate
    }

    @Test func anIdleTunnelIsClosedAfterTunnelIdle() throws {
        let origin = try RawOrigin()
        let gate = try fixture.start(ProxyFixture.policy(), ["--tunnel-idle", "1s"], connectPorts: [origin.port])
        let client = try fixture.tunnel(to: "origin.test", port: origin.port, timeout: 6)
        client.send("x")  // not TLS: relayed at once
        let seconds = try #require(client.secondsUntilClosed())
        #expect(seconds >= 0.9 && seconds < 4, "closed after \(seconds) s")
        _ = gate
    }

    @Test func anOpenTunnelIsClosedWhenANewPolicyBlocksItsHost() throws {
        let origin = try RawOrigin()
        let gate = try fixture.start(connectPorts: [origin.port])
        let client = try fixture.tunnel(to: "open.test", port: origin.port, timeout: 6)
        client.send("x")
        #expect(origin.waitForBytes(1) == Array("x".utf8))
        try fixture.replacePolicy(ProxyFixture.policy(blocked: ["open.test"], version: 4))
        let seconds = try #require(client.secondsUntilClosed())
        #expect(seconds < 2.5, "closed \(seconds) s after the new policy")
        gate.daemon.stop()
        let hits = try fixture.storedHits(gate)
        #expect(
            hits.contains(
                HitSummary(
                    domain: "open.test", reason: "blocked_domain:open.test", source: "proxy",
                    client: "127.0.0.1", count: 1)), "\(hits)")
        let listed = try GateCommand.run(["hits", "--json", "--state-dir", gate.stateDirectory])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains(#""domain":"open.test""#), "\(listed.stdout)")
        #expect(listed.stdout.contains(#""reasons":["blocked_domain:open.test"]"#))
    }

    /// The daemon's wall clock starts five seconds before a downtime window (the test
    /// clock): no waiting for a real minute to turn, and no dependence on the hour.
    @Test func anOpenTunnelIsClosedWhenACutoffBegins() throws {
        let origin = try RawOrigin()
        let clock = SystemClock()
        let started = clock.now()
        let gate = try fixture.start(
            ProxyFixture.policy(screenTime: PolicyDocuments.downtime("12:00", "12:30")),
            connectPorts: [origin.port], wallClock: "2026-12-01T11:59:55Z")
        defer { gate.daemon.stop() }
        let ready = clock.now()
        let client = try fixture.tunnel(to: "open.test", port: origin.port, timeout: 9)
        client.send("x")
        #expect(origin.waitForBytes(1) == Array("x".utf8), "allowed before the window")
        #expect(client.secondsUntilClosed() != nil)
        // The daemon made its clock between `started` and `ready`; the cutoff is 5 s later.
        let after = (Double(clock.now() - started) / 1e9 - 5, Double(clock.now() - ready) / 1e9 - 5)
        #expect(after.0 >= -0.2 && after.1 < 1.6, "closed between \(after.1) and \(after.0) s after the cutoff began")
        gate.daemon.stop()
        let hits = try fixture.storedHits(gate)
        #expect(
            hits.contains { $0.domain == "open.test" && $0.reason == "downtime" && $0.source == "proxy" }, "\(hits)")
    }
}
