import Foundation
import TestSupport
import Testing

/// docs/dns.md#dnssec against real validators: a DNS tree of the test's own, signed from
/// the root down (knotd), a validating unbound as the gateway's upstream and another as
/// its client, as a home's validating Pi-hole or router would be:
///
///     dig → unbound (validating) → phosra-gate → unbound (validating) → knotd
///
/// `com` is signed; `google.com` and `blocked.com` under it are not, as google.com is not.
@Suite(
    .serialized, .blocking,
    .enabled(if: SignedZones.available, "needs knotd and keymgr (package knot: scripts/install-deps --test)"))
struct DNSSECIntegrationTests {
    let fixture: UpstreamFixture
    let zones: SignedZones
    /// The gateway's upstream: validates and says so with AD.
    let upstream: ValidatingResolver
    let gate: GateRun
    /// The gateway's client: validates everything the gateway answers.
    let client: ValidatingResolver

    /// An HTTPS record with `ech` (bytes 01 02 03 04), in the signed `com`.
    static let httpsRecord = "svc.com. HTTPS 1 . alpn=h2 ech=AQIDBA=="

    init() throws {
        fixture = try UpstreamFixture()
        zones = try SignedZones(
            com: [
                "signed.com. A 198.51.100.7", Self.httpsRecord, "svc.com. A 198.51.100.8",
                "casino.com. A 198.51.100.9",
            ],
            zones: [
                .init(
                    "google.com", signed: false,
                    records: [
                        "google.com. A 198.51.100.1", "www.google.com. A 198.51.100.1",
                        "mail.google.com. A 198.51.100.2", "forcesafesearch.google.com. A 198.51.100.3",
                    ]),
                .init("blocked.com", signed: false, records: ["www.blocked.com. A 198.51.100.4"]),
            ])
        upstream = try ValidatingResolver(forwardingTo: zones.port, trustAnchor: zones.trustAnchor)
        gate = try fixture.start(
            PolicyDocuments.json(level: "light", safeSearch: true, blocked: ["blocked.com", "casino.com"]),
            upstream: upstream.spec)
        client = try ValidatingResolver(forwardingTo: gate.port, trustAnchor: zones.trustAnchor)
    }

    var logs: String { "gateway:\n\(gate.log)\nclient unbound:\n\(client.log)\nupstream unbound:\n\(upstream.log)" }

    /// Safe search rewrites `google.com` itself: had its DS been rewritten too, the
    /// validator could not prove the zone unsigned and would fail every name in it.
    @Test func namesUnderTheTablesZonesValidateAndTheRewriteReachesTheClient() throws {
        let mail = try client.dig("mail.google.com", "A", ["+dnssec"])
        #expect(mail.status == "NOERROR", "\(mail)\n\(logs)")
        #expect(mail.answerData == ["198.51.100.2"])
        #expect(!mail.flags.contains("ad"), "an unsigned zone: insecure, not secure")

        let www = try client.dig("www.google.com", "A", ["+dnssec"])
        #expect(www.status == "NOERROR", "\(www)\n\(logs)")
        #expect(www.answerData == ["forcesafesearch.google.com.", "198.51.100.3"], "\(www)")

        let proof = try client.dig("google.com", "DS", ["+dnssec"])
        #expect(proof.status == "NOERROR" && proof.answers.isEmpty, "\(proof)")
        #expect(proof.flags.contains("ad"), "com proves google.com has no DS: \(proof)")
        #expect(proof.authority.contains { $0.contains("\tNSEC\t") }, "\(proof)")

        let signed = try client.dig("signed.com", "A", ["+dnssec"])
        #expect(signed.status == "NOERROR", "\(signed)\n\(logs)")
        #expect(signed.answers.filter { $0.contains("\tA\t") }.count == 1, "\(signed)")
        #expect(signed.flags.contains("ad"), "the chain from the root validates through the gateway: \(signed)")
    }

    /// docs/dns.md#what-a-validating-client-sees: a block of an unsigned zone is taken as
    /// it is; one of a signed zone, and an HTTPS record whose `ech` went, cannot be proven.
    @Test func blocksAndStrippedRecordsAsAValidatingClientSeesThem() throws {
        let unsigned = try client.dig("www.blocked.com", "A", ["+dnssec"])
        #expect(unsigned.status == "NXDOMAIN", "\(unsigned)\n\(logs)")
        let direct = try gate.dig("www.blocked.com", "A", ["+dnssec"])
        #expect(direct.status == "NXDOMAIN")
        #expect(direct.extendedErrors == ["15 (Blocked): (blocked_domain:blocked.com)"], "\(direct)")
        #expect(direct.ednsFlags == ["do"])

        let signed = try client.dig("casino.com", "A", ["+dnssec"])
        #expect(signed.status == "SERVFAIL", "a signed zone's block is bogus: \(signed)")
        let stripped = try client.dig("svc.com", "HTTPS", ["+dnssec"])
        #expect(stripped.status == "SERVFAIL", "the record no longer matches its RRSIG: \(stripped)")
        #expect(try client.dig("svc.com", "A", ["+dnssec"]).flags.contains("ad"), "its addresses still validate")
    }

    /// RFC 4035 §3.2.3 and RFC 6840 §5.7, at the gateway itself.
    @Test func adIsClearedOnAStrippedHTTPSAnswerAndPassedOnOtherwise() throws {
        let original = try upstream.dig("svc.com", "HTTPS", ["+dnssec", "+adflag"])
        #expect(original.flags.contains("ad") && original.answerData.first?.contains("ech=") == true, "\(original)")
        let stripped = try gate.dig("svc.com", "HTTPS", ["+dnssec", "+adflag"])
        #expect(stripped.status == "NOERROR", "\(stripped)\n\(logs)")
        let https = stripped.answers.filter { $0.contains("\tHTTPS\t") }
        #expect(https.count == 1 && !https[0].contains("ech="), "\(stripped)")
        #expect(!stripped.flags.contains("ad"), "ech removed: AD cleared: \(stripped)")
        #expect(stripped.ednsFlags == ["do"], "DO copied")

        let withAD = try gate.dig("signed.com", "A", ["+adflag", "+nodnssec"])
        #expect(withAD.flags.contains("ad"), "AD without DO gets the upstream's AD: \(withAD)")
        #expect(withAD.ednsFlags == [], "no DO asked, none answered: \(withAD)")
        #expect(!(try gate.dig("signed.com", "A", ["+noadflag", "+nodnssec"]).flags.contains("ad")))
        let withDO = try gate.dig("signed.com", "A", ["+noadflag", "+dnssec"])
        #expect(withDO.flags.contains("ad") && withDO.ednsFlags == ["do"], "\(withDO)")
        #expect(withDO.answers.contains { $0.contains("\tRRSIG\t") }, "DO: the signature passed on: \(withDO)")
    }
}
