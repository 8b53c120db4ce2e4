import Foundation
import TestSupport
import Testing

/// CONNECT with real curl against the real binary (docs/proxy.md#connect): the decision, 403 with
/// `X-Phosra-Block` before any upstream contact, safe-search re-targeting, the port and
/// IP-literal rules, and hits recorded as the proxy's.
@Suite(.serialized, .blocking) struct ConnectIntegrationTests {
    let fixture: ProxyFixture

    init() throws { fixture = try ProxyFixture() }

    @Test func anAllowedConnectCarriesTLSEndToEnd() throws {
        let certificates = try TestCertificates()
        let https = try TestHTTPServer(tls: try TestTLSServerContext(certificates)) { _ in
            .respond(.init(status: 200, text: "secret page\n"))
        }
        let gate = try fixture.start(connectPorts: [https.port])
        let result = try fixture.curl(["--cacert", certificates.caFile, "https://dot.test:\(https.port)/page"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.connectStatus == 200)
        #expect(result.output.hasPrefix("HTTP/1.1 200 Connection established\r\n"))
        #expect(result.status == 200)
        #expect(result.body == "secret page\n")
        #expect(https.connectionsAccepted == 1)
        #expect(fixture.dns.waitForQueries("dot.test", type: "A").count == 1, "resolved through the gateway's resolver")
        _ = gate
    }

    @Test func aBlockedConnectIs403WithTheReasonAndTheOriginIsNeverContacted() throws {
        let gate = try fixture.start()
        for host in ["adult.example", "www.adult.example", "www.reddit.com"] {
            let result = try fixture.curl(["-p", "http://\(host):\(fixture.origin.port)/"])
            #expect(result.connectStatus == 403, "\(result)")
            #expect(result.output.hasPrefix("HTTP/1.1 403 Forbidden\r\n"))
            #expect(result.output.contains("\r\nContent-Type: text/plain"))
        }
        let raw = try fixture.client()
        raw.send("CONNECT x.adult.example:\(fixture.origin.port) HTTP/1.1\r\n\r\n")
        let answer = String(decoding: raw.readToEnd() ?? [], as: UTF8.self)
        #expect(answer.contains("\r\nX-Phosra-Block: category:adult\r\n"), "\(answer)")
        #expect(
            answer.hasSuffix("\r\n\r\nblocked by phosra-gate: x.adult.example (category:adult)\n"), "a one-line body")
        let looked = try fixture.dns.settledQueries().filter {
            $0.name.hasSuffix("adult.example") || $0.name.hasSuffix("reddit.com")
        }
        #expect(looked.isEmpty, "not even looked up: \(looked)")
        gate.daemon.stop()
        // After the daemon has exited, anything it had started would have reached the origin.
        #expect(fixture.origin.connectionsAccepted == 0, "the upstream is never contacted")
        let hits = try fixture.storedHits(gate)
        #expect(
            hits.contains(
                HitSummary(
                    domain: "adult.example", reason: "category:adult", source: "proxy", client: "127.0.0.1",
                    count: 1)), "\(hits)")
        #expect(
            hits.contains {
                $0.domain == "www.reddit.com" && $0.reason == "blocked_domain:reddit.com" && $0.source == "proxy"
            })
        #expect(hits.allSatisfy { $0.source == "proxy" })
    }

    @Test func aSafeSearchConnectLandsOnTheRewriteTargetsAddress() throws {
        let gate = try fixture.start()
        let result = try fixture.curl(["-p", "http://www.google.com:\(fixture.origin.port)/search?q=x"])
        #expect(result.connectStatus == 200, "\(result)")
        #expect(result.status == 200)
        #expect(result.body.contains("origin saw GET /search?q=x"), "the origin at the target's address answered")
        #expect(
            result.body.contains("Host: www.google.com:\(fixture.origin.port)"),
            "the tunnel carries the original request")
        #expect(fixture.origin.connectionsAccepted == 1)
        #expect(fixture.dns.waitForQueries("forcesafesearch.google.com", type: "A").count == 1)
        #expect(fixture.dns.queries(for: "www.google.com").isEmpty, "the original name is never resolved")
        _ = gate
    }

    @Test func aPortOutsideConnectPortsIsRefused() throws {
        let gate = try fixture.start()
        let other = FreePort.tcpAndUDP()
        let result = try fixture.curl(["-p", "http://origin.test:\(other)/"])
        #expect(result.connectStatus == 403, "\(result)")
        #expect(result.output.contains("\r\nX-Phosra-Block: port\r\n"))
        _ = gate
    }

    @Test func anIPLiteralIsRefusedUnlessAllowIPConnect() throws {
        let gate = try fixture.start()
        let refused = try fixture.curl(["-p", "http://127.0.0.1:\(fixture.origin.port)/"])
        #expect(refused.connectStatus == 403, "\(refused)")
        #expect(refused.output.contains("\r\nX-Phosra-Block: ip_literal\r\n"))
        #expect(fixture.origin.connectionsAccepted == 0)
        gate.daemon.stop()

        let allowing = try fixture.start(
            ProxyFixture.policy(blocked: ["reddit.com", "127.0.0.2"]), ["--allow-ip-connect"])
        let allowed = try fixture.curl(["-p", "http://127.0.0.1:\(fixture.origin.port)/ip"])
        #expect(allowed.connectStatus == 200, "\(allowed)")
        #expect(allowed.body.hasPrefix("origin saw GET /ip"))
        let entry = try fixture.curl(["-p", "http://127.0.0.2:\(fixture.origin.port)/"])
        #expect(
            entry.output.contains("\r\nX-Phosra-Block: ip_literal\r\n"), "a blocked IP entry is refused all the same")
        _ = allowing
    }

    @Test func aNameWithOnlyAnIPv6AddressIsTriedOverIPv6() throws {
        let gate = try fixture.start()
        let result = try fixture.curl(["-p", "http://v6only.test:\(fixture.origin.port)/"])
        // The origin listens on 127.0.0.1 only: the proxy tried ::1 (AAAA after an empty A) and got refused.
        #expect(result.connectStatus == 502, "\(result)")
        #expect(fixture.dns.waitForQueries("v6only.test", type: "AAAA").count == 1)
        let unknown = try fixture.curl(["-p", "http://nowhere.test:\(fixture.origin.port)/"])
        #expect(unknown.connectStatus == 502, "\(unknown)")
        _ = gate
    }

    /// Small reads are copied through the loop's buffer; a read that fills it turns its
    /// direction to splice. Transfers far larger than both arrive byte for byte: a TLS
    /// download with curl, and an upload after a small first write, half-closed.
    @Test func largeTransfersCrossTheTunnelIntactBothWays() throws {
        let certificates = try TestCertificates()
        let letters: [UInt8] = (0..<4_000_000).map { (index: Int) -> UInt8 in
            UInt8(97 + (index * 7 + index / 4096) % 26)
        }
        let page = String(decoding: letters, as: UTF8.self)
        let https = try TestHTTPServer(tls: try TestTLSServerContext(certificates)) { _ in
            .respond(.init(status: 200, text: page))
        }
        let origin = try RawOrigin(replyAfterEOF: true)
        let gate = try fixture.start(connectPorts: [https.port, origin.port])

        let download = try fixture.curl(["--cacert", certificates.caFile, "https://dot.test:\(https.port)/big"])
        #expect(download.status == 200, "\(download.exitCode)")
        #expect(download.body.utf8.count == page.utf8.count)
        #expect(download.body == page)

        let client = try fixture.tunnel(to: "origin.test", port: origin.port)
        let first = Array("small first\n".utf8)
        let payload: [UInt8] = (0..<3_000_000).map { (index: Int) -> UInt8 in
            UInt8(truncatingIfNeeded: (index &* 2_654_435_761) >> 13)
        }
        client.send(first)
        _ = origin.waitForBytes(first.count)
        client.send(payload)
        client.shutdownWrite()
        let reply = String(decoding: client.readToEnd() ?? [], as: UTF8.self)
        #expect(reply == "got \(first.count + payload.count) bytes\n")
        #expect(origin.received() == first + payload)
        _ = gate
    }
}
