import DNSWire
import DomainMatch
import Policy
import Testing

@testable import DNSProxy

/// The HTTP proxy's typed door into the resolver: a host decided once by the proxy is
/// resolved, not decided again; a block found in the CNAME chain comes back as a
/// `Decision` (never as text) and is recorded as the proxy's hit, under the profile given.
@Suite struct HostLookupTests {
    let fixture = PipelineFixture(policy: Self.policy())
    var profile: Profile { fixture.pipeline.snapshot.engine.profiles.profiles[0] }

    static func policy() -> CompiledPolicy {
        var policy = CompiledPolicy()
        policy.webFilter.blockedDomains = ["reddit.com"]
        policy.webFilter.safeSearch = true
        return policy
    }

    func lookUp(_ name: String, _ type: DNSType = .a, inspect: Bool = true) -> QueryPipeline.HostStep {
        fixture.pipeline.lookUpHost(
            try! QueryName.parse(name), type: type, profile: profile, inspect: inspect, client: PipelineFixture.client,
            now: PipelineFixture.noon, snapshot: fixture.pipeline.snapshot)
    }

    func reply(_ resolution: HostResolution, _ answers: [ResourceRecord], rcode: DNSRcode = .noError) -> [UInt8] {
        var header = DNSHeader(id: 7)
        header.isResponse = true
        header.rcode = rcode
        var writer = DNSMessageWriter(header: header, edns: nil)
        writer.addQuestion(resolution.question)
        for record in answers { writer.addRecord(record, to: .answer) }
        return writer.finish()
    }

    func finish(
        _ step: QueryPipeline.HostStep, _ answers: [ResourceRecord], rcode: DNSRcode = .noError
    ) throws
        -> ResolvedHost
    {
        guard case .resolve(let resolution) = step else {
            Issue.record("expected an upstream resolution, got \(step)")
            return .failed
        }
        return fixture.pipeline.finishHost(
            resolution, reply: reply(resolution, answers, rcode: rcode), now: PipelineFixture.noon,
            snapshot: fixture.pipeline.snapshot)
    }

    @Test func addressesComeBackTypedAndAreCachedForTheDNSSideToo() throws {
        let found = try finish(lookUp("example.org"), [PipelineFixture.a("example.org", 0xC000_0207)])
        #expect(found == .addresses([IPAddress("192.0.2.7")!]))
        guard case .done(let cached) = lookUp("example.org") else {
            Issue.record("not answered from the cache")
            return
        }
        #expect(cached == .addresses([IPAddress("192.0.2.7")!]))
        #expect(fixture.receive(PipelineFixture.query("example.org")).replyMessage != nil)
    }

    /// The proxy decided reddit.com (and refused it) before any lookup; were it asked, the
    /// resolver would not decide it a second time: one decision per CONNECT.
    @Test func theNameItselfIsNeverDecidedAgain() throws {
        let found = try finish(lookUp("www.reddit.com"), [PipelineFixture.a("www.reddit.com", 0xC000_0209)])
        #expect(found == .addresses([IPAddress("192.0.2.9")!]))
        #expect(fixture.hits.all.isEmpty)
    }

    @Test func aChainReachingABlockedNameIsADecisionAndAProxyHit() throws {
        let found = try finish(
            lookUp("cdn.example"),
            [PipelineFixture.cname("cdn.example", "edge.reddit.com"), PipelineFixture.a("edge.reddit.com", 1)])
        guard case .blocked(let decision) = found else {
            Issue.record("not blocked: \(found)")
            return
        }
        #expect(decision.reason == .blockedDomain && decision.rule == "reddit.com")
        let hit = try #require(fixture.hits.all.first)
        #expect(hit.source == .proxy && hit.name == "cdn.example" && hit.rule == "edge.reddit.com")
        #expect(hit.profile == profile.name)
    }

    @Test func withoutInspectionTheChainIsNotJudged() throws {
        let found = try finish(
            lookUp("cdn.example", inspect: false),
            [PipelineFixture.cname("cdn.example", "edge.reddit.com"), PipelineFixture.a("edge.reddit.com", 1)])
        #expect(found == .addresses([.v4(1)]))
        #expect(fixture.hits.all.isEmpty)
    }

    @Test func aChainReachingASafeSearchNameIsItsTarget() throws {
        let found = try finish(
            lookUp("search.example"),
            [PipelineFixture.cname("search.example", "www.google.com"), PipelineFixture.a("www.google.com", 1)])
        #expect(found == .rewrite(try QueryName.parse("forcesafesearch.google.com")))
    }

    @Test func outcomesWithoutAddresses() throws {
        #expect(try finish(lookUp("gone.example"), [], rcode: .nxDomain) == .notFound)
        #expect(try finish(lookUp("v6only.example"), []) == .noAddress)
        #expect(try finish(lookUp("broken.example"), [], rcode: .servFail) == .failed)
        guard case .done(let local) = lookUp("printer.lan") else {
            Issue.record("a local name went upstream")
            return
        }
        #expect(local == .notFound)
        guard case .resolve(let resolution) = lookUp("dead.example") else { return }
        #expect(
            fixture.pipeline.finishHost(
                resolution, reply: nil, now: PipelineFixture.noon, snapshot: fixture.pipeline.snapshot) == .failed)
    }
}
