import Foundation
import TestSupport
import Testing

/// docs/dns.md#answer-inspection: for filtered clients the `ech` parameter is removed from HTTPS answers, so
/// the real site name stays visible to the proxy's SNI check.
@Suite(.serialized, .blocking) struct ECHIntegrationTests {
    /// HTTPS RDATA: priority 1, target ".", alpn=h2, ipv4hint=192.0.2.1, ech=01020304 (keys in order).
    static let rdata =
        "0001" + "00" + "0001" + "0003" + "026832" + "0004" + "0004" + "c0000201" + "0005" + "0004" + "01020304"

    @Test func echIsRemovedButTheOtherParametersStay() throws {
        let fixture = try UpstreamFixture()
        let upstream = try DnsmasqUpstream(["--dns-rr=svc.test,65,\(Self.rdata)"])
        let gate = try fixture.start(PolicyDocuments.json(level: "light"), upstream: upstream.spec)
        let direct = try Dig.query("svc.test", "HTTPS", port: upstream.port)
        #expect(direct.answerData.first?.contains("ech=") == true, "the upstream really serves ech: \(direct)")
        let answer = try gate.dig("svc.test", "HTTPS")
        #expect(answer.status == "NOERROR")
        let data = try #require(answer.answerData.first)
        #expect(!data.contains("ech="), "\(data)")
        #expect(data.contains("alpn=\"h2\"") || data.contains("alpn=h2"), "\(data)")
        #expect(data.contains("ipv4hint=192.0.2.1"), "\(data)")
    }
}
