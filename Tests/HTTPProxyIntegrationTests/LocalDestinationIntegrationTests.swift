import EventLoop
import Foundation
import TestSupport
import Testing

/// The proxy never reaches the gateway itself (docs/proxy.md#local-destinations): names and
/// literals that resolve to loopback or unspecified addresses are refused with `403
/// local_destination` after resolution, through CONNECT and plain HTTP, and nothing
/// listening there is contacted. (The gateway's own LAN address: `LocalDestinationLANTests`.)
@Suite(.serialized, .blocking) struct LocalDestinationIntegrationTests {
    let fixture: ProxyFixture

    init() throws { fixture = try ProxyFixture() }

    /// A request through the proxy, raw: the response head.
    private func ask(_ request: String) throws -> String {
        let client = try fixture.client()
        client.send(request)
        return client.read(until: "\r\n\r\n")
    }

    @Test func loopbackAndUnspecifiedTargetsAre403AndNeverContacted() throws {
        // A listener on [::1] at the origin's port too: nothing may reach either.
        let v6 = try Socket.listen(on: SocketAddress(ipv6: 0, 1, port: fixture.origin.port))
        let gate = try fixture.start(ProxyFixture.policy(), ["--allow-ip-connect"], localOrigins: false)
        let port = fixture.origin.port
        let hosts = [
            "localhost", "origin.test", "v6only.test", "zero.test", "mixed.test", "127.0.0.1", "[::1]", "0.0.0.0",
        ]
        for host in hosts {
            let tunnel = try ask("CONNECT \(host):\(port) HTTP/1.1\r\nHost: \(host):\(port)\r\n\r\n")
            #expect(tunnel.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "CONNECT \(host): \(tunnel)")
            #expect(tunnel.contains("\r\nX-Phosra-Block: local_destination\r\n"), "CONNECT \(host): \(tunnel)")
            let plain = try ask("GET http://\(host):\(port)/ HTTP/1.1\r\nHost: \(host):\(port)\r\n\r\n")
            #expect(plain.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "GET \(host): \(plain)")
            #expect(plain.contains("\r\nX-Phosra-Block: local_destination\r\n"), "GET \(host): \(plain)")
        }
        // curl, as a device would use it.
        let viaCurl = try fixture.curl(["--noproxy", "", "http://localhost:\(port)/"])
        #expect(viaCurl.status == 403, "\(viaCurl)")
        #expect(viaCurl.output.contains("X-Phosra-Block: local_destination"))
        // After the daemon has exited, anything it had started would have arrived.
        gate.daemon.stop()
        #expect(fixture.origin.connectionsAccepted == 0, "the loopback origin was contacted")
        #expect((try? v6.accept()) == nil, "the [::1] listener was contacted")
        // Not a policy decision: no hit.
        #expect(try fixture.storedHits(gate).filter { $0.reason.hasPrefix("local_destination") }.isEmpty)
    }

    @Test func plainHTTPGoesOnlyToHTTPPorts() throws {
        let gate = try fixture.start()
        let other = FreePort.tcpAndUDP()
        let refused = try fixture.curl(["http://origin.test:\(other)/"])
        #expect(refused.status == 403, "\(refused)")
        #expect(refused.output.contains("X-Phosra-Block: port"))
        let allowed = try fixture.curl(["http://origin.test:\(fixture.origin.port)/"])
        #expect(allowed.status == 200, "\(allowed)")
        _ = gate
    }

    @Test func allowLocalDestinationsLetsTestsReachLoopback() throws {
        let gate = try fixture.start()
        let result = try fixture.curl(["http://origin.test:\(fixture.origin.port)/"])
        #expect(result.status == 200, "\(result)")
        #expect(fixture.origin.connectionsAccepted == 1)
        _ = gate
    }
}
