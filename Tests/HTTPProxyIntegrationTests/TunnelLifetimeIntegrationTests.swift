import Foundation
import Testing
import TestSupport

/// How long a tunnel lives (SPEC §5.2, §5.4): half-close both ways, `tunnel_idle`, and
/// open tunnels closed within a second when a cutoff begins or a new policy blocks their
/// host — recorded as hits of the proxy.
@Suite(.serialized) struct TunnelLifetimeIntegrationTests {
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
        let origin = try TestHTTPServer { _ in .rawParts([Array("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n".utf8), [0x41]],
                                                          pause: .milliseconds(2), close: false) }
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
        #expect(hits.contains(HitSummary(domain: "open.test", reason: "blocked_domain:open.test", source: "proxy",
                                         client: "127.0.0.1", count: 1)), "\(hits)")
        let listed = try GateCommand.run(["hits", "--json", "--state-dir", gate.stateDirectory])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains(#""domain":"open.test""#), "\(listed.stdout)")
        #expect(listed.stdout.contains(#""reasons":["blocked_domain:open.test"]"#))
    }

    /// The daemon's zone is shifted by a few seconds (a POSIX TZ with a seconds offset),
    /// so a downtime window starting at the next full minute of its wall clock begins a
    /// few seconds from now: no waiting for a real minute to turn.
    @Test func anOpenTunnelIsClosedWhenACutoffBegins() throws {
        let origin = try RawOrigin()
        let boundary = Int(Date().timeIntervalSince1970) + 6
        let offset = (60 - boundary % 60) % 60
        let minute = (boundary + offset) / 60 % 1440
        func hhmm(_ value: Int) -> String { String(format: "%02d:%02d", value % 1440 / 60, value % 60) }
        let window = #""downtime_windows": [{"start_time": "\#(hhmm(minute))", "end_time": "\#(hhmm(minute + 30))"}]"#
        let policy = try fixture.scratch.write("policy.json", ProxyFixture.policy(screenTime: window))
        let state = fixture.scratch.path("state-zone")
        let daemon = try ChildDaemon(GateRun.binary, [
            "run", "--policy", policy, "--lists", fixture.lists, "--upstream", fixture.dns.spec, "--state-dir", state,
            "--dns-listen", "127.0.0.1:\(FreePort.tcpAndUDP())", "--proxy-listen", "127.0.0.1:\(fixture.proxyPort)",
            "--connect-ports", "\(origin.port)",
        ], environment: ["TZ": "PGT-00:00:\(String(format: "%02d", offset))"])
        defer { daemon.stop() }
        #expect(daemon.waitFor("event=listening service=proxy", timeout: 5), "\(daemon.stderr)")
        let client = try fixture.tunnel(to: "open.test", port: origin.port, timeout: 9)
        client.send("x")
        #expect(origin.waitForBytes(1) == Array("x".utf8), "allowed before the window")
        let (closed, _) = timed { client.secondsUntilClosed() }
        let at = Date().timeIntervalSince1970
        #expect(closed != nil)
        #expect(at >= Double(boundary) - 0.2 && at < Double(boundary) + 1.6, "closed \(at - Double(boundary)) s after the cutoff began")
        daemon.stop()
        let hits = try HitSummary.read(stateDirectory: state)
        #expect(hits.contains { $0.domain == "open.test" && $0.reason == "downtime" && $0.source == "proxy" }, "\(hits)")
    }
}
