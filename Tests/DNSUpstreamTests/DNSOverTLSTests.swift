import DNSUpstream
import DNSWire
import DomainMatch
import TLS
import TestSupport
import Testing

/// DNS-over-TLS against a real unbound with a certificate from a test CA (RFC 7858).
@Suite(.serialized, .blocking) struct DNSOverTLSTests {
    private func spec(_ server: UnboundDoT, name: String = TestCertificates.serverName) -> UpstreamSpec {
        upstream("tls://127.0.0.1:\(server.port)#\(name)")
    }

    @Test func answersWithTheRightCAAndName() throws {
        let unbound = try UnboundDoT()
        let tls = try TLSContext(caFile: unbound.certificates.caFile)
        try withHarness(upstreams: [spec(unbound)], tls: tls) { harness throws in
            #expect(try harness.resolve("www.example.test").address == UnboundDoT.answer)
            #expect(harness.events.value.isEmpty)
        }
    }

    @Test func aWrongServerNameFailsTheUpstream() throws {
        let unbound = try UnboundDoT()
        let tls = try TLSContext(caFile: unbound.certificates.caFile)
        let wrong = spec(unbound, name: "other.test")
        try withHarness(upstreams: [wrong], tls: tls) { harness throws in
            #expect(try harness.resolve("www.example.test").reply == nil)
            #expect(
                harness.events.value.map(\.description) == [
                    "upstream \(wrong) failed: certificate verify failed: hostname mismatch"
                ])
        }
    }

    @Test(arguments: [false, true])
    func anUntrustedCAFailsTheUpstream(otherCA: Bool) throws {
        let unbound = try UnboundDoT()
        let tls = try otherCA ? TLSContext(caFile: unbound.certificates.otherCAFile) : TLSContext()
        try withHarness(upstreams: [spec(unbound)], tls: tls) { harness throws in
            #expect(try harness.resolve("www.example.test").reply == nil)
            #expect(
                harness.events.value == [
                    .failed(
                        spec(unbound),
                        .tls(.handshakeFailed("certificate verify failed: unable to get local issuer certificate")))
                ])
        }
    }

    @Test func fiftyConcurrentQueriesArePipelinedOnOneConnection() throws {
        let unbound = try UnboundDoT()
        let tls = try TLSContext(caFile: unbound.certificates.caFile)
        try withHarness(upstreams: [spec(unbound)], tls: tls) { harness throws in
            let names = (0..<50).map { "q\($0).example.test" }
            let outcomes = try harness.resolveAll(names)
            for (name, outcome) in zip(names, outcomes) {
                #expect(outcome.address == UnboundDoT.answer)
                let message = try DNSMessage.parse(try #require(outcome.reply))
                let expected = try DNSName(name)
                #expect(message.questions.first?.name == expected)
            }
            #expect(try harness.onLoop { $0.streamConnectsStarted } == 1)
        }
    }

    @Test func aConnectionTheServerClosedIsReopenedForTheNextQuery() throws {
        let unbound = try UnboundDoT(idleTimeoutMilliseconds: 100)
        let tls = try TLSContext(caFile: unbound.certificates.caFile)
        try withHarness(upstreams: [spec(unbound)], tls: tls) { harness throws in
            #expect(try harness.resolve("first.example.test").address == UnboundDoT.answer)
            // unbound closes the idle connection after 100 ms; the client notices the close.
            #expect(waitUntil(timeout: 3_000_000_000) { (try? harness.onLoop { $0.openStreamConnections }) == 0 })
            #expect(try harness.resolve("second.example.test").address == UnboundDoT.answer)
            #expect(try harness.onLoop { $0.streamConnectsStarted } == 2)
            #expect(harness.events.value.isEmpty)
        }
    }
}
