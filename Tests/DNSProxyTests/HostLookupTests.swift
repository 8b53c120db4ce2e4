import DNSWire
import DomainMatch
import Policy
import TestSupport
import Testing

@testable import DNSProxy

/// The HTTP proxy's typed door into the resolver: a host decided once by the proxy is
/// resolved, not decided again; a block found in the CNAME chain comes back as a
/// `Decision` (never as text) and is recorded as the proxy's hit, under the profile given.
@Suite(.blocking) struct HostLookupTests {
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

    /// The addresses a cached answer gives the proxy are read in place with the record
    /// cursor; they must be what a full parse of the message finds, and a message the parse
    /// refuses must be refused (nil: `.failed`). Checked on an answer with a CNAME chain,
    /// both address types and an authority record, on every truncation of it, and on it with
    /// each byte changed.
    @Test func addressesReadInPlaceAgreeWithAFullParse() {
        var header = DNSHeader(id: 7)
        header.isResponse = true
        var writer = DNSMessageWriter(header: header, edns: EDNS(udpPayloadSize: 1232))
        writer.addQuestion(DNSQuestion(name: try! DNSName("www.example.org"), type: .a))
        writer.addRecord(
            ResourceRecord(
                name: try! DNSName("www.example.org"), ttl: 60, rdata: .cname(try! DNSName("edge.example.net"))),
            to: .answer)
        writer.addRecord(PipelineFixture.a("edge.example.net", 0xC000_0207), to: .answer)
        writer.addRecord(
            ResourceRecord(
                name: try! DNSName("edge.example.net"), ttl: 60,
                rdata: .aaaa(RData.IPv6(high: 0x2001_0DB8_0000_0000, low: 0x0000_0000_0000_0001))),
            to: .answer)
        writer.addRecord(PipelineFixture.a("edge.example.net", 0xC000_0208), to: .answer)
        writer.addRecord(PipelineFixture.a("ns.example.net", 0xC000_0209), to: .authority)
        let message = writer.finish()
        func parsed(_ bytes: [UInt8]) -> [IPAddress]? {
            guard let message = try? DNSMessage.parse(bytes) else { return nil }
            return message.answers.compactMap { record -> IPAddress? in
                switch record.rdata {
                case .a(let address): .v4(address.value)
                case .aaaa(let address): .v6(high: address.high, low: address.low)
                default: nil
                }
            }
        }
        let original = [IPAddress("192.0.2.7")!, IPAddress("2001:db8::1")!, IPAddress("192.0.2.8")!]
        #expect(QueryPipeline.addresses(in: message) == original)
        var variants = (0..<message.count).map { Array(message[..<$0]) }
        for index in message.indices {
            for value: UInt8 in [0x00, 0x05, 0x1C, 0xC0, 0xFF] where message[index] != value {
                var changed = message
                changed[index] = value
                variants.append(changed)
            }
        }
        var disagreements: [Int] = []
        for (number, bytes) in variants.enumerated() {
            let found = QueryPipeline.addresses(in: bytes)
            if let expected = parsed(bytes) {
                if found != expected { disagreements.append(number) }
            } else if let found {
                // The parse refused the message for a record whose RDATA the cursor does not
                // read (a type changed to CNAME, a name in an authority record): the
                // addresses found must be ones the message holds, in order, never made up.
                var rest = original[...]
                for address in found {
                    guard let at = rest.firstIndex(of: address) else {
                        disagreements.append(number)
                        break
                    }
                    rest = rest[(at + 1)...]
                }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) of \(variants.count) variants")
    }
}
