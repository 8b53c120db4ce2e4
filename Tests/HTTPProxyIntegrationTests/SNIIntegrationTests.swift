import Foundation
import TestSupport
import Testing

/// The SNI check inside allowed tunnels (docs/proxy.md#the-sni-check), with real openssl and hand-made
/// ClientHellos written whole or in parts.
@Suite(.serialized) struct SNIIntegrationTests {
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
        let https = try TestHTTPServer(tls: try TLSServerContext(certificates)) { _ in
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
        // A client pausing mid-hello, so the proxy reads it in two parts (the scenario).
        pause(200_000_000)
        client.send(Array(blocked[60...]))
        #expect(client.readToEnd() == [], "a ClientHello in two writes and several records is still judged")
        #expect(listener.received().isEmpty)

        // The same for an allowed name: every byte arrives, in order.
        let allowed = TLSClientHello.records(
            TLSClientHello.handshake(serverName: "origin.test", padding: 200), fragmentSize: 100)
        let second = try fixture.tunnel(to: "origin.test", port: listener.port)
        second.send(Array(allowed[..<60]))
        pause(200_000_000)  // as above
        second.send(Array(allowed[60...]))
        #expect(listener.waitForBytes(allowed.count) == allowed)
        _ = gate
    }
}
