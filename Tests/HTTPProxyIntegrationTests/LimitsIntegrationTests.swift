import Foundation
import TestSupport
import Testing

/// Who may use the proxy and what it puts up with (docs/proxy.md#who-is-served).
@Suite(.serialized, .blocking) struct LimitsIntegrationTests {
    let fixture: ProxyFixture

    init() throws { fixture = try ProxyFixture() }

    @Test func aClientOutsideAllowClientsIs403() throws {
        let gate = try fixture.start(ProxyFixture.policy(), ["--allow-clients", "10.0.0.0/8"])
        let result = try fixture.curl(["http://origin.test:\(fixture.origin.port)/"])
        #expect(result.status == 403, "\(result)")
        #expect(result.body.contains("may not use this proxy"))
        let tunnel = try fixture.curl(["-p", "http://origin.test:\(fixture.origin.port)/"])
        #expect(tunnel.connectStatus == 403, "\(tunnel)")
        #expect(fixture.origin.connectionsAccepted == 0)
        _ = gate
    }

    @Test func aClientOverItsConnectionLimitIsRefusedUntilOneCloses() throws {
        let gate = try fixture.start(ProxyFixture.policy(), ["--proxy-max-conns-per-client", "2"])
        var first: ProxyClient? = try fixture.tunnel(to: "origin.test")
        let second = try fixture.client()
        second.send("GET http://origin.test:\(fixture.origin.port)/ HTTP/1.1\r\n\r\n")
        #expect(second.readResponse().hasPrefix("HTTP/1.1 200 OK"))
        let third = try fixture.client()
        let refused = String(decoding: third.readToEnd() ?? [], as: UTF8.self)
        #expect(refused.hasPrefix("HTTP/1.1 429 Too Many Requests\r\n"), "\(refused)")
        #expect(refused.contains("too many connections from 127.0.0.1"))
        #expect(first != nil)
        first = nil  // closes it
        // Refused (429) until the proxy has seen the close and freed the slot.
        let fourth = waitFor(interval: 10_000_000) { try? fixture.tunnel(to: "origin.test") }
        #expect(fourth != nil, "a tunnel once the first connection closed")
        _ = (second, fourth, gate)
    }

    @Test func anOversizedHeaderBlockIs431() throws {
        let gate = try fixture.start()
        let client = try fixture.client()
        client.send("GET http://origin.test:\(fixture.origin.port)/ HTTP/1.1\r\n")
        for index in 0..<180 { client.send("X-Filler-\(index): \(String(repeating: "a", count: 90))\r\n") }
        client.send("\r\n")
        let answer = client.readResponse()
        #expect(answer.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"), "\(answer)")
        #expect(fixture.origin.connectionsAccepted == 0)
        // Just under the limit is fine.
        let fits = try fixture.curl([
            "-H", "X-Big: \(String(repeating: "b", count: 15_000))",
            "http://origin.test:\(fixture.origin.port)/",
        ])
        #expect(fits.status == 200, "\(fits)")
        _ = gate
    }

    @Test func aMalformedRequestLineIs400() throws {
        let gate = try fixture.start()
        let client = try fixture.client()
        client.send("THIS IS NOT HTTP\r\n\r\n")
        #expect(client.readResponse().hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        let garbage = try fixture.client()
        garbage.send([0x16, 0x03, 0x01, 0x00, 0x05, 0xFF, 0x00, 0x0D, 0x0A, 0x0D, 0x0A, 0x0D, 0x0A])
        #expect(garbage.readResponse().hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(gate.daemon.isRunning)
        _ = gate
    }

    @Test func sigtermStopsAcceptingClosesIdleConnectionsAndExits() throws {
        let gate = try fixture.start()
        let idle = try fixture.client()
        idle.send("GET /proxy.pac HTTP/1.1\r\nHost: proxy\r\n\r\n")
        #expect(idle.readResponse().hasPrefix("HTTP/1.1 200 OK\r\n"), "a kept-alive connection, now idle")
        let (status, seconds) = timed { () -> Int32? in
            gate.daemon.signal(SIGTERM)
            return gate.daemon.waitForExit(timeout: 8)
        }
        #expect(status == 0)
        #expect(seconds < 2, "nothing in flight: no need to wait (\(seconds) s)")
        #expect(idle.readToEnd() == [], "the idle connection was closed")
        #expect((try? fixture.client()) == nil, "no longer listening")
        #expect(gate.log.contains("event=stopped"))
    }

    @Test func headersNotCompleteWithin10SecondsCloseTheConnection() throws {
        let gate = try fixture.start()
        let client = try fixture.client(timeout: 14)
        client.send("GET http://origin.test:\(fixture.origin.port)/ HTTP/1.1\r\nX-Slow: ")
        let (closedAfter, _) = timed { client.secondsUntilClosed() }
        let seconds = try #require(closedAfter)
        #expect(seconds > 9 && seconds < 11.5, "closed after \(seconds) s")
        #expect(fixture.origin.connectionsAccepted == 0)
        _ = gate
    }
}
