import Foundation
import TestSupport
import Testing

/// What answers may carry (docs/dns.md#what-answers-may-carry), against a real dnsmasq
/// upstream serving the records and `dig` as the client: records whose target the policy
/// blocks go with their glue, and a public name's local addresses go (DNS rebinding)
/// unless the name is under `rebind_allow`.
@Suite(.serialized, .blocking) struct AnswerScreeningIntegrationTests {
    let fixture: UpstreamFixture

    init() throws { fixture = try UpstreamFixture() }

    /// A name's wire form as hex, for dnsmasq's `--dns-rr`.
    static func wire(_ name: String) -> String {
        name.split(separator: ".").map { label in
            String(format: "%02x", label.utf8.count) + label.utf8.map { String(format: "%02x", $0) }.joined()
        }.joined() + "00"
    }

    @Test func recordsWithABlockedTargetLoseThemAndTheirGlue() throws {
        let upstream = try DnsmasqUpstream([
            "--mx-host=mx.allowed.test,mail.blocked.example,10", "--mx-host=mx.allowed.test,mail.allowed.test,20",
            "--host-record=mail.blocked.example,192.0.2.66", "--host-record=mail.allowed.test,192.0.2.70",
            "--srv-host=_sip._tcp.allowed.test,sip.blocked.example,5060,1,1",
            "--host-record=sip.blocked.example,192.0.2.67",
            "--dns-rr=ns.allowed.test,2,\(Self.wire("ns1.blocked.example"))",
            "--dns-rr=https.allowed.test,65,0001\(Self.wire("cdn.blocked.example"))",
        ])
        // The upstream's own answers carry every record: what goes is the gateway's doing.
        let direct = try Dig.query("mx.allowed.test", "MX", port: upstream.port)
        #expect(direct.answers.count == 2 && direct.additional.count == 2, "\(direct)")
        #expect(try Dig.query("_sip._tcp.allowed.test", "SRV", port: upstream.port).additional.count == 1)

        let gate = try fixture.start(PolicyDocuments.json(blocked: ["blocked.example"]), upstream: upstream.spec)
        let mx = try gate.dig("mx.allowed.test", "MX")
        #expect(mx.status == "NOERROR", "\(mx)")
        #expect(mx.answerData == ["20 mail.allowed.test."], "\(mx)")
        #expect(mx.additional.count == 1 && mx.additional.first?.hasPrefix("mail.allowed.test.") == true, "\(mx)")
        #expect(mx.extendedErrors.isEmpty)

        let blocked = "15 (Blocked): (blocked_domain:blocked.example)"
        for (name, type) in [
            ("_sip._tcp.allowed.test", "SRV"), ("ns.allowed.test", "NS"), ("https.allowed.test", "HTTPS"),
        ] {
            let answer = try gate.dig(name, type)
            #expect(answer.status == "NOERROR", "\(type): \(answer)")
            #expect(answer.answers.isEmpty && answer.additional.isEmpty, "\(type): \(answer)")
            #expect(answer.extendedErrors == [blocked], "\(type): \(answer)")
        }
        // From the cache, the same: the upstream was asked once by dig above, once by the gateway.
        #expect(try gate.dig("_sip._tcp.allowed.test", "SRV").answers.isEmpty)
        #expect(try upstream.settledQueries(for: "_sip._tcp.allowed.test").count == 2)
    }

    @Test func aPublicNameAnsweringALocalAddressLosesIt() throws {
        let upstream = try DnsmasqUpstream([
            "--host-record=private.test,192.168.1.20", "--host-record=ten.test,10.1.2.3",
            "--host-record=loop.test,127.0.0.1", "--host-record=ula.test,fd00::20",
            "--address=/mixed.test/192.0.2.7", "--address=/mixed.test/10.1.2.4",
            "--host-record=nas.corp.test,192.168.1.21", "--host-record=nas.lan,192.168.1.22",
            "--host-record=public.test,192.0.2.8",
        ])
        let gate = try fixture.start(
            PolicyDocuments.json(), upstream: upstream.spec,
            ["--rebind-allow", "corp.test", "--local-forward", "lan=\(upstream.spec)"])
        let refused = "15 (Blocked): (local_destination)"
        for (name, type) in [("private.test", "A"), ("ten.test", "A"), ("loop.test", "A"), ("ula.test", "AAAA")] {
            let answer = try gate.dig(name, type)
            #expect(answer.status == "NOERROR", "\(name): \(answer)")
            #expect(answer.answers.isEmpty, "\(name): \(answer)")
            #expect(answer.extendedErrors == [refused], "\(name): \(answer)")
        }
        let mixed = try gate.dig("mixed.test")
        #expect(mixed.answerData == ["192.0.2.7"], "\(mixed)")
        #expect(mixed.extendedErrors.isEmpty)
        #expect(try gate.dig("public.test").answerData == ["192.0.2.8"])
        // Under rebind_allow, and a local_forward zone (always added).
        #expect(try gate.dig("nas.corp.test").answerData == ["192.168.1.21"])
        #expect(try gate.dig("nas.lan").answerData == ["192.168.1.22"])

        // allow_local_destinations, the tests' setting, keeps them.
        let tests = try fixture.start(PolicyDocuments.json(), upstream: upstream.spec, ["--allow-local-destinations"])
        #expect(try tests.dig("private.test").answerData == ["192.168.1.20"])
        #expect(try tests.dig("loop.test").answerData == ["127.0.0.1"])
    }
}
