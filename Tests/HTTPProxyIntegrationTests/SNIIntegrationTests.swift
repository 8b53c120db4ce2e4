import Foundation
import GateHarness
import TestSupport
import Testing

/// The SNI check inside allowed tunnels (docs/proxy.md#the-sni-check), with real openssl and hand-made
/// ClientHellos written whole or in parts.
@Suite(.serialized, .blocking) struct SNIIntegrationTests {
    let fixture: ProxyFixture

    init() throws { fixture = try ProxyFixture() }

    /// `openssl s_client -proxy` through the gateway to `connect`, naming `serverName`.
    private func sClient(connect: String, serverName: String, caFile: String) throws -> (status: Int32, output: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "s_client", "-proxy", "127.0.0.1:\(fixture.proxyPort)", "-connect", connect,
            "-servername", serverName, "-CAfile", caFile, "-verify_return_error", "-brief",
        ]
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = input
        try process.run()
        input.fileHandleForWriting.write(Data("Q\n".utf8))
        if !waitUntil(timeout: 8_000_000_000, interval: 20_000_000, { !process.isRunning }) { process.terminate() }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        return (
            process.terminationStatus,
            String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        )
    }

    @Test func anSNINamingABlockedHostClosesTheTunnel() throws {
        let certificates = try TestCertificates()
        let https = try TestHTTPServer(tls: try TestTLSServerContext(certificates)) { _ in
            .respond(.init(status: 200, text: "x"))
        }
        let gate = try fixture.start(connectPorts: [https.port])
        let good = try sClient(connect: "dot.test:\(https.port)", serverName: "dot.test", caFile: certificates.caFile)
        #expect(
            good.output.contains("Verification: OK") || good.output.contains("CONNECTION ESTABLISHED"), "\(good.output)"
        )
        let bad = try sClient(
            connect: "dot.test:\(https.port)", serverName: "www.adult.example", caFile: certificates.caFile)
        #expect(bad.status != 0, "\(bad.output)")
        #expect(!bad.output.contains("CONNECTION ESTABLISHED"))
        gate.daemon.stop()
        let hits = try fixture.storedHits(gate)
        #expect(
            hits.contains {
                $0.domain == "www.adult.example" && $0.reason == "sni:www.adult.example" && $0.source == "proxy"
            },
            "\(hits)")
    }

    @Test func aHandMadeClientHelloForABlockedNameNeverReachesTheOrigin() throws {
        let listener = try RawOrigin()
        let gate = try fixture.start(connectPorts: [listener.port])
        let client = try fixture.tunnel(to: "origin.test", port: listener.port)
        client.send(TLSClientHello.record(serverName: "www.reddit.com"))
        #expect(client.readToEnd() == [], "closed without a byte")
        #expect(listener.received().isEmpty, "the origin got a connection but not one byte")
        _ = gate
    }

    @Test func aSplitClientHelloIsReassembledAndJudged() throws {
        let listener = try RawOrigin()
        let gate = try fixture.start(connectPorts: [listener.port])
        let blocked = TLSClientHello.records(
            TLSClientHello.handshake(serverName: "adult.example", padding: 200),
            fragmentSize: 100)
        let client = try fixture.tunnel(to: "origin.test", port: listener.port)
        client.send(Array(blocked[..<60]))
        // A client pausing mid-hello until the proxy has read the first part: it reads the
        // hello in two parts (the scenario).
        #expect(waitUntil { TCPQueues.peerHasRead(client.descriptor) }, "the proxy read the first part")
        client.send(Array(blocked[60...]))
        #expect(client.readToEnd() == [], "a ClientHello in two writes and several records is still judged")
        #expect(listener.received().isEmpty)

        // The same for an allowed name: every byte arrives, in order.
        let allowed = TLSClientHello.records(
            TLSClientHello.handshake(serverName: "origin.test", padding: 200), fragmentSize: 100)
        let second = try fixture.tunnel(to: "origin.test", port: listener.port)
        second.send(Array(allowed[..<60]))
        #expect(waitUntil { TCPQueues.peerHasRead(second.descriptor) }, "as above")
        second.send(Array(allowed[60...]))
        #expect(listener.waitForBytes(allowed.count) == allowed)
        _ = gate
    }

    /// What a curious child tried on port 443, each closed for a filtered client with a
    /// `tls_unreadable` hit, not one byte reaching the origin: a hello after a 2.5 s pause,
    /// a record header at once and the rest 2.5 s later, a hello padded past 16 KiB, a
    /// server name with two trailing dots, and plain HTTP in the tunnel. (Port 443 is where
    /// the check fails closed: the origin listens on 127.0.0.61:443.) The daemon runs on a
    /// clock the test moves: the pause is a step of it.
    @Test func everyWayAroundTheCheckOn443IsClosedWithAHit() throws {
        let listener = try RawOrigin(host: "127.0.0.61", port: 443)
        let gate = try fixture.startInProcess(connectPorts: [443])
        defer { gate.stop() }
        let hello = TLSClientHello.record(serverName: "www.reddit.com")
        let padded = TLSClientHello.records(
            TLSClientHello.handshake(serverName: "www.reddit.com", padding: 17_000), fragmentSize: 16_384)
        let tries = ["pause", "header first", "padded", "two dots", "not TLS"]
        let clients = try tries.map { _ in try fixture.tunnel(to: "edge.test", port: 443) }
        clients[1].send(Array(hello.prefix(5)))
        clients[2].send(padded)
        clients[3].send(TLSClientHello.record(serverName: "www.reddit.com.."))
        clients[4].send("GET / HTTP/1.1\r\nHost: www.reddit.com\r\n\r\n")
        // Closed for what they sent, the clock not moved.
        for (what, client) in zip(tries, clients).dropFirst(2) {
            #expect(client.readUntilClosedOrReset() == [], "\(what): closed without a byte")
        }
        // The scenario's pause, past the check's 2 s: the two tunnels still short of a hello
        // are closed then as unreadable (were they judged by the hello sent after, the hit
        // would be an `sni:` one).
        #expect(gate.advance(by: .seconds(2.5)))
        clients[0].send(hello)
        clients[1].send(Array(hello.dropFirst(5)))
        for (what, client) in zip(tries, clients).prefix(2) {
            #expect(client.readUntilClosedOrReset() == [], "\(what): closed without a byte")
        }
        #expect(listener.received().isEmpty, "the origin got not one byte")
        #expect(gate.stop(), "\(gate.log)")
        let hits = try fixture.storedHits(gate).filter { $0.reason == "tls_unreadable" }
        #expect(hits.map(\.domain) == ["edge.test"], "\(hits)")
        #expect(hits.map(\.count) == [5], "\(hits)")
    }

    /// A tunnel whose hello named an allowed host is re-decided on that name too: a new
    /// policy blocking it closes the open tunnel within about a second, with a hit.
    @Test func anOpenTunnelIsClosedWhenTheNameItsHelloAskedForIsBlocked() throws {
        let listener = try RawOrigin(host: "127.0.0.61", port: 443)
        let gate = try fixture.start(connectPorts: [443])
        let client = try fixture.tunnel(to: "edge.test", port: 443, timeout: 6)
        let hello = TLSClientHello.record(serverName: "news.test")
        client.send(hello)
        #expect(listener.waitForBytes(hello.count) == hello, "an allowed hello is relayed")
        try fixture.replacePolicy(ProxyFixture.policy(blocked: ["reddit.com", "news.test"], version: 4))
        #expect(client.secondsUntilClosed() != nil, "the tunnel was not closed:\n\(gate.log)")
        gate.daemon.stop()
        let hits = try fixture.storedHits(gate)
        #expect(hits.contains { $0.domain == "news.test" && $0.reason == "sni:news.test" }, "\(hits)")
    }
}
