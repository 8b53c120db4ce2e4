import DNSWire
import DomainMatch
import Policy
import Testing

@testable import DNSProxy

/// docs/dns.md#what-answers-may-carry: an answer carries its question's chain, the
/// records of names the client's profile does not block, and for a public name no local
/// address.
@Suite struct AnswerScreeningTests {
    typealias F = PipelineFixture

    static func record(_ name: String, _ rdata: RData) -> ResourceRecord {
        ResourceRecord(name: try! DNSName(name), ttl: 300, rdata: rdata)
    }

    static func name(_ text: String) -> DNSName { try! DNSName(text) }

    static func aaaa(_ name: String, _ text: String) -> ResourceRecord {
        guard case .v6(let high, let low) = IPAddress(text)! else { preconditionFailure(text) }
        return record(name, .aaaa(RData.IPv6(high: high, low: low)))
    }

    static func a(_ name: String, _ text: String) -> ResourceRecord {
        guard case .v4(let bits) = IPAddress(text)! else { preconditionFailure(text) }
        return record(name, .a(RData.IPv4(bits)))
    }

    /// `name`'s answer of `type` for the fixture's client, through the upstream's `reply`.
    static func answer(
        _ fixture: F, _ name: String, _ type: DNSType = .a, answers: [ResourceRecord],
        authority: [ResourceRecord] = [], additional: [ResourceRecord] = []
    ) throws -> DNSMessage {
        let pending = try #require(fixture.receive(F.query(name, type)).pending)
        let reply = F.reply(to: pending, answers: answers, authority: authority, additional: additional)
        return try #require(fixture.pipeline.complete(pending, reply: reply, now: F.noon).replyMessage)
    }

    static func texts(_ records: [ResourceRecord]) -> [String] { records.map { "\($0.name) \($0.type) \($0.rdata)" } }

    @Test func recordsOutsideTheQuestionsChainAreRemoved() throws {
        let fixture = F()
        let answer = try Self.answer(
            fixture, "www.example.org",
            answers: [
                Self.record("example.org", .dname(Self.name("example.net"))),
                Self.record("www.example.org", .cname(Self.name("www.example.net"))),
                Self.record("other.example", .dname(Self.name("elsewhere.example"))),
                Self.a("www.example.net", "192.0.2.7"), Self.a("unrelated.example", "192.0.2.9"),
                Self.record("decoy.example", .cname(Self.name("www.example.net"))),
            ])
        #expect(
            Self.texts(answer.answers) == [
                "example.org DNAME example.net", "www.example.org CNAME www.example.net",
                "www.example.net A 192.0.2.7",
            ])
        // The proxy reads its addresses from the same cached answer.
        let pending = try #require(fixture.receive(F.query("mail.example.org")).pending)
        let reply = F.reply(
            to: pending, answers: [Self.a("mail.example.org", "192.0.2.8"), Self.a("unrelated.example", "192.0.2.9")])
        let entry = try #require(CacheEntry.make(from: reply, now: 0, minTTL: 0, maxTTL: 86_400))
        #expect(QueryPipeline.addresses(in: entry.response) == [IPAddress("192.0.2.8")!])
    }

    /// A blocked name is `blocked.example`, on the strict policy's block list.
    @Test(arguments: [
        (
            DNSType.mx, RData.mx(.init(preference: 10, exchange: Self.name("mail.blocked.example"))),
            RData.mx(.init(preference: 20, exchange: Self.name("mail.example.org")))
        ),
        (
            DNSType.srv, RData.srv(.init(priority: 1, weight: 1, port: 5060, target: Self.name("sip.blocked.example"))),
            RData.srv(.init(priority: 2, weight: 1, port: 5060, target: Self.name("sip.example.org")))
        ),
        (DNSType.ns, RData.ns(Self.name("ns1.blocked.example")), RData.ns(Self.name("ns1.example.org"))),
        (
            DNSType.https, RData.https(try! .init(priority: 1, target: Self.name("cdn.blocked.example"), params: [])),
            RData.https(try! .init(priority: 2, target: Self.name("cdn.example.org"), params: []))
        ),
        (
            DNSType.svcb, RData.svcb(try! .init(priority: 1, target: Self.name("cdn.blocked.example"), params: [])),
            RData.svcb(try! .init(priority: 2, target: Self.name("cdn.example.org"), params: []))
        ),
    ])
    func aRecordWithABlockedTargetGoesWithItsGlue(type: DNSType, blocked: RData, allowed: RData) throws {
        let owner = type == .srv ? "_sip._tcp.example.org" : "example.org"
        let blockedTarget = try #require(AnswerScreening.target(of: blocked)).description
        let allowedTarget = try #require(AnswerScreening.target(of: allowed)).description
        let glue = [Self.a(blockedTarget, "192.0.2.66"), Self.a(allowedTarget, "192.0.2.70")]
        let both = [Self.record(owner, blocked), Self.record(owner, allowed)]

        let fixture = F(policy: F.strict)
        let kept = try Self.answer(fixture, owner, type, answers: both, additional: glue)
        #expect(kept.rcode == .noError)
        #expect(Self.texts(kept.answers) == Self.texts([Self.record(owner, allowed)]))
        #expect(Self.texts(kept.additionals) == Self.texts([glue[1]]))
        #expect(kept.extendedErrorTexts.isEmpty, "something is left: no error")

        // Its only record's target blocked: nothing is left, and the EDE says why.
        let alone = try Self.answer(
            F(policy: F.strict), owner, type, answers: [Self.record(owner, blocked)], additional: [glue[0]])
        #expect(alone.rcode == .noError && alone.answers.isEmpty && alone.additionals.isEmpty)
        #expect(alone.extendedErrorTexts == ["blocked_domain:blocked.example"])
        #expect(
            try alone.edns?.extendedErrors().map(\.code) == [.blocked])

        // No hit: the client asked for the owner, which is allowed.
        #expect(fixture.hits.all.isEmpty)
        // An unfiltered client gets all of it.
        let open = try Self.answer(F(unfiltered: true), owner, type, answers: both, additional: glue)
        #expect(open.answers.count == 2 && open.additionals.count == 2)
    }

    @Test func authorityNamesAndAdditionalOwnersAreDecided() throws {
        let fixture = F(policy: F.strict)
        let answer = try Self.answer(
            fixture, "www.example.org",
            answers: [Self.a("www.example.org", "192.0.2.7")],
            authority: [
                Self.record("example.org", .ns(Self.name("ns1.blocked.example"))),
                Self.record("example.org", .ns(Self.name("ns2.example.org"))),
            ],
            additional: [
                Self.a("ns1.blocked.example", "192.0.2.66"), Self.a("ns2.example.org", "192.0.2.70"),
                Self.aaaa("x.adult.example", "2001:db8::66"),
            ])
        #expect(Self.texts(answer.answers) == ["www.example.org A 192.0.2.7"])
        #expect(Self.texts(answer.authorities) == ["example.org NS ns2.example.org"])
        #expect(Self.texts(answer.additionals) == ["ns2.example.org A 192.0.2.70"])
        // The next client of the same profile gets it from the cache, screened again.
        let cached = try #require(fixture.receive(F.query("www.example.org")).replyMessage)
        #expect(Self.texts(cached.authorities) == ["example.org NS ns2.example.org"])
    }

    @Test func aParentAllowedNameIsNotScreened() throws {
        var policy = F.strict
        policy.webFilter.allowedDomains = ["allowed.example"]
        let answer = try Self.answer(
            F(policy: policy), "allowed.example", .mx,
            answers: [
                Self.record("allowed.example", .mx(.init(preference: 1, exchange: Self.name("mx.blocked.example"))))
            ])
        #expect(answer.answers.count == 1)
    }

    @Test(arguments: [
        "127.0.0.1", "0.0.0.0", "10.1.2.3", "172.16.0.9", "172.31.255.1", "192.168.1.20", "100.64.0.1",
        "169.254.169.254", "::1", "::", "fe80::1", "fd00::20", "fc00::1", "::ffff:192.168.1.1", "::ffff:127.0.0.1",
    ])
    func aPublicNameLosesItsLocalAddresses(address: String) throws {
        let local = address.contains(":") ? Self.aaaa("site.example", address) : Self.a("site.example", address)
        let type: DNSType = address.contains(":") ? .aaaa : .a
        let published = type == .a ? Self.a("site.example", "192.0.2.7") : Self.aaaa("site.example", "2001:db8::7")
        // Unfiltered clients too: rebinding attacks the network, not the policy.
        for fixture in [F(policy: F.strict), F(unfiltered: true)] {
            let mixed = try Self.answer(fixture, "site.example", type, answers: [local, published])
            #expect(Self.texts(mixed.answers) == Self.texts([published]), "\(address)")
            #expect(mixed.extendedErrorTexts.isEmpty)
            let alone = try Self.answer(
                fixture, "only.example", type,
                answers: [
                    address.contains(":") ? Self.aaaa("only.example", address) : Self.a("only.example", address)
                ])
            #expect(alone.rcode == .noError && alone.answers.isEmpty, "\(address): \(alone)")
            #expect(alone.extendedErrorTexts == ["local_destination"])
            #expect(fixture.hits.all.isEmpty, "not a hit")
        }
    }

    @Test func publicAddressesAreNotLocal() {
        let rebinding = RebindingGuard()
        for text in ["192.0.2.7", "8.8.8.8", "172.32.0.1", "172.15.255.255", "100.128.0.1", "2001:db8::1", "fe00::1"] {
            #expect(!rebinding.isLocal(IPAddress(text)!), "\(text)")
        }
    }

    @Test func rebindAllowTheGatewaysOwnAddressesAndAllowLocalDestinations() throws {
        let answers = [Self.a("nas.corp.example", "192.168.1.20")]
        let corp = F(rebinding: RebindingGuard(allow: DomainSuffixes([try QueryName.parse("corp.example")])))
        #expect(try Self.answer(corp, "nas.corp.example", answers: answers).answers.count == 1)
        let strict = F()
        #expect(try Self.answer(strict, "nas.corp.example", answers: answers).answers.isEmpty)
        let tests = F(rebinding: RebindingGuard(enabled: false))
        #expect(try Self.answer(tests, "nas.corp.example", answers: answers).answers.count == 1)

        let own = F(rebinding: RebindingGuard(ownAddresses: [IPAddress("203.0.113.5")!]))
        let gateway = try Self.answer(own, "gw.example", answers: [Self.a("gw.example", "203.0.113.5")])
        #expect(gateway.answers.isEmpty && gateway.extendedErrorTexts == ["local_destination"])

        // `lan` is in the default list; local_forward sends it to the LAN's own server.
        let lan = F(localForward: ["lan"])
        let nas = try Self.answer(lan, "nas.lan", answers: [Self.a("nas.lan", "192.168.1.20")])
        #expect(Self.texts(nas.answers) == ["nas.lan A 192.168.1.20"])
    }

    @Test func theCommonAnswerHasNothingToScreen() throws {
        let pending = try #require(F().receive(F.query("www.example.org")).pending)
        for answers in [
            [Self.a("www.example.org", "192.0.2.7")],
            [
                Self.record("www.example.org", .cname(Self.name("edge.example.net"))),
                Self.a("edge.example.net", "192.0.2.8"),
            ],
        ] {
            let entry = try #require(
                CacheEntry.make(from: F.reply(to: pending, answers: answers), now: 0, minTTL: 0, maxTTL: 86_400))
            #expect(entry.screening == nil)
        }
    }
}
