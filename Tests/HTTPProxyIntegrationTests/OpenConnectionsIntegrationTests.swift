import EventLoop
import Foundation
import SystemIO
import TestSupport
import Testing

/// Open connections follow the policy (docs/proxy.md#open-connections-follow-the-policy):
/// a plain-HTTP download and a tunnel in progress end within a second of a new policy or
/// a cutoff that blocks their host, and end with a reset, so what the gateway had already
/// buffered for the device never reaches it.
///
/// Each case runs two downloads from an origin that sends without end: one read as fast
/// as it comes, which says when the gateway ended it; one that the device stops reading
/// (its receive buffer 16 KiB), so the gateway's socket and pipes fill for it. Once its
/// connection is reset, what its own kernel holds (FIONREAD) arrived before the end; read,
/// anything beyond that arrived after: a close that delivered what was buffered gave it
/// megabytes (and no hang-up while the device did not read).
@Suite(.serialized, .blocking) struct OpenConnectionsIntegrationTests {
    let fixture: ProxyFixture

    init() throws { fixture = try ProxyFixture() }

    /// What reaches the device after the end, at most (the goal: under 64 KiB).
    static let deliveredAfterEndLimit = 64 * 1024

    /// A connection through the proxy that has started to receive the stream.
    private func download(_ start: (ProxyClient) -> Void, receiveBuffer: Int32? = nil) throws -> ProxyClient {
        let client = try ProxyClient(port: fixture.proxyPort, timeout: 6, receiveBuffer: receiveBuffer)
        start(client)
        try client.readAtLeast(256 * 1024)
        return client
    }

    private func plainRequest(_ port: UInt16) -> (ProxyClient) -> Void {
        { $0.send("GET http://open.test:\(port)/endless HTTP/1.1\r\nHost: open.test:\(port)\r\n\r\n") }
    }

    private func connectRequest(_ port: UInt16) -> (ProxyClient) -> Void {
        { client in
            client.send("CONNECT open.test:\(port) HTTP/1.1\r\nHost: open.test\r\n\r\n")
            _ = client.read(until: "\r\n\r\n")
            client.send("x")
        }
    }

    /// Reads `client` to its end: the bytes and the seconds from `since` (monotonic ns).
    private func readToEnd(_ client: ProxyClient, since: UInt64) -> (bytes: Int?, seconds: Double) {
        let bytes = client.readUntilClosedOrReset()?.count
        return (bytes, Double(SystemClock().now() - since) / 1e9)
    }

    @Test(arguments: ["plain HTTP", "tunnel"])
    func aDownloadEndsWithinASecondOfANewPolicyBlockingItsHostAndLosesWhatWasBuffered(_ kind: String) throws {
        try SocketMemoryTests.exclusively {
            let origin = try StreamingOrigin(httpHead: kind == "plain HTTP")
            let gate = try fixture.start(connectPorts: [origin.port], httpPorts: [origin.port])
            let request = kind == "plain HTTP" ? plainRequest(origin.port) : connectRequest(origin.port)
            let reader = try download(request)
            let stalled = try download(request, receiveBuffer: 16_384)
            // The stalled device's socket fills; the gateway's buffers for it fill behind it
            // while the new policy is noticed.
            #expect(waitUntil { stalled.queuedBytes() >= 16_384 }, "\(kind): the stalled device's socket filled")
            try fixture.replacePolicy(ProxyFixture.policy(blocked: ["open.test"], version: 4))
            let replaced = SystemClock().now()
            let read = readToEnd(reader, since: replaced)
            #expect(read.bytes != nil, "\(kind): still open after 6 s")
            // The policy file is noticed within a second; the connection ends within the next.
            #expect(read.seconds < 2.5, "\(kind): ended \(read.seconds) s after the new policy")
            let hungUp = stalled.waitForHangup(seconds: 3)
            let held = stalled.queuedBytes()  // arrived before the end
            #expect(hungUp, "\(kind): the stalled device's connection was not reset")
            let (ended, readSeconds) = timed { stalled.readUntilClosedOrReset() }
            let after = try #require(ended, "\(kind): the stalled download never ended")
            #expect(
                after.count - held < Self.deliveredAfterEndLimit,
                Comment(
                    rawValue:
                        "\(kind): \(after.count - held) bytes reached the stalled device after the end (\(held) held before), read over "
                        + "\(readSeconds) s\n\(gate.log.suffix(3000))"))
            gate.daemon.stop()
            let hits = try fixture.storedHits(gate).filter { $0.domain == "open.test" }
            #expect(hits.map(\.reason) == ["blocked_domain:open.test"], "\(kind): \(hits)")
            #expect(hits.first?.count == 2, "\(kind): one hit for each download: \(hits)")
        }
    }

    /// The daemon's wall clock starts five seconds before a downtime window (the test
    /// clock), as for tunnels in TunnelLifetimeIntegrationTests.
    @Test(arguments: ["plain HTTP", "tunnel"])
    func aDownloadEndsWithinASecondOfACutoffAndLosesWhatWasBuffered(_ kind: String) throws {
        try SocketMemoryTests.exclusively {
            let origin = try StreamingOrigin(httpHead: kind == "plain HTTP")
            let clock = SystemClock()
            let started = clock.now()
            let gate = try fixture.start(
                ProxyFixture.policy(screenTime: PolicyDocuments.downtime("12:00", "12:30")),
                connectPorts: [origin.port], wallClock: "2026-12-01T11:59:55Z", httpPorts: [origin.port])
            defer { gate.daemon.stop() }
            let ready = clock.now()
            let request = kind == "plain HTTP" ? plainRequest(origin.port) : connectRequest(origin.port)
            let stalled = try download(request, receiveBuffer: 16_384)
            let reader = try download(request)
            let read = readToEnd(reader, since: ready)
            #expect(read.bytes != nil, "\(kind): still open after 6 s")
            // The daemon made its clock between `started` and `ready`; the cutoff is 5 s later.
            let end = (Double(clock.now() - started) / 1e9 - 5, read.seconds - 5)
            #expect(
                end.0 >= -0.2 && end.1 < 1.6, "\(kind): ended between \(end.1) and \(end.0) s after the cutoff began")
            let hungUp = stalled.waitForHangup(seconds: 3)
            let held = stalled.queuedBytes()  // arrived before the end
            #expect(hungUp, "\(kind): the stalled device's connection was not reset")
            let after = try #require(stalled.readUntilClosedOrReset(), "\(kind): the stalled download never ended")
            #expect(
                after.count - held < Self.deliveredAfterEndLimit,
                "\(kind): \(after.count - held) bytes reached the stalled device after the end (\(held) held before)")
        }
    }
}
