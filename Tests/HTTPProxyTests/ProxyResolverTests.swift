import DNSProxy
import DNSUpstream
import DNSWire
import DomainMatch
import EventLoop
import Policy
import ProxyCore
import SystemIO
import TestSupport
import Testing

@testable import HTTPProxy

/// The proxy's lookups go through the loop's resolver with the `Profile` the connection
/// decided with: chosen by MAC, address or proxy user, it is never looked up again by name
/// (where a profile chosen by proxy user would fall back to the address's profile once a
/// new snapshot no longer had it). A block in the CNAME chain is that profile's decision
/// and hit.
@Suite(.blocking) struct ProxyResolverTests {
    /// Answers every question with `www.example.org CNAME edge.blocked.example` and an address.
    final class ChainUpstream: UpstreamResolving {
        func resolve(
            _ question: DNSQuestion, dnssecOK: Bool, checkingDisabled: Bool, upstreams: [UpstreamSpec]?,
            completion: @escaping ([UInt8]?) -> Void
        ) {
            var header = DNSHeader(id: 1)
            header.isResponse = true
            var writer = DNSMessageWriter(header: header, edns: nil)
            writer.addQuestion(question)
            let edge = try! DNSName("edge.blocked.example")
            writer.addRecord(ResourceRecord(name: question.name, ttl: 60, rdata: .cname(edge)), to: .answer)
            writer.addRecord(ResourceRecord(name: edge, ttl: 60, rdata: .a(RData.IPv4(0xC000_0207))), to: .answer)
            completion(writer.finish())
        }
    }

    /// Answers A with 192.0.2.7 and AAAA with 2001:db8::7, and keeps the types asked, in order.
    final class BothFamilies: UpstreamResolving {
        var asked: [DNSType] = []

        func resolve(
            _ question: DNSQuestion, dnssecOK: Bool, checkingDisabled: Bool, upstreams: [UpstreamSpec]?,
            completion: @escaping ([UInt8]?) -> Void
        ) {
            asked.append(question.type)
            var header = DNSHeader(id: 1)
            header.isResponse = true
            var writer = DNSMessageWriter(header: header, edns: nil)
            writer.addQuestion(question)
            let rdata: RData =
                question.type == .aaaa
                ? .aaaa(RData.IPv6(high: 0x2001_0DB8_0000_0000, low: 7)) : .a(RData.IPv4(0xC000_0207))
            writer.addRecord(ResourceRecord(name: question.name, ttl: 60, rdata: rdata), to: .answer)
            completion(writer.finish())
        }
    }

    final class Hits: HitRecorder, @unchecked Sendable {
        // Sendable: recorded and read on the loop thread only.
        var all: [Hit] = []
        func record(_ hit: Hit) { all.append(hit) }
    }

    static func snapshot(kidBlocks: Bool) -> ProxySnapshot {
        var policy = CompiledPolicy()
        policy.webFilter.blockedDomains = kidBlocks ? ["blocked.example"] : []
        let roster = ProfileRoster(
            members: [ProfileRoster.Member(name: "kid", proxyUser: "kid")], defaultProfile: Profile.noneName)
        let profiles = [
            Profile(name: "kid", rules: PolicyRules(policy)),
            Profile(name: Profile.noneName, rules: .unfiltered),
        ]
        let engine = DecisionEngine(
            system: SystemRules(DecisionOptions()),
            categories: CategorySet(matcher: LabelTrie(lists: [[]], listNames: ["adult"]), present: []),
            zone: .utc, profiles: ProfileTable(roster: roster, profiles: profiles))
        return ProxySnapshot(engine: engine, answers: AnswerBuilder(mode: .nxdomain, blockTTL: 10))
    }

    @Test func aLookupInspectsWithTheProfileItCarriesEvenAfterANewSnapshot() throws {
        let group = try EventLoopGroup(loopCount: 1, name: "test-resolver", clock: SystemClock())
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let hits = Hits()
        let first = Self.snapshot(kidBlocks: true)
        let kid = try #require(first.engine.profiles.named("kid"))
        let client = IPAddress("192.168.1.20")!
        #expect(first.engine.profiles.choose(Client(address: client)).name == Profile.noneName, "by address: none")
        let (found, hitNames) = try loop.runSync(timeout: 10_000_000_000) { () -> (ResolvedHost?, [String]) in
            let pipeline = QueryPipeline(
                snapshot: first, cache: ResponseCache(capacity: 10, serveStaleMax: 0), hits: hits)
            let driver = QueryDriver(loop: loop, pipeline: pipeline, upstream: ChainUpstream())
            // A new configuration meanwhile: no profile named kid any more.
            driver.snapshot = Self.snapshot(kidBlocks: false)
            var result: ResolvedHost?
            ProxyResolver(driver: driver).lookup(
                HostQuery(name: try QueryName.parse("www.example.org"), profile: kid, inspect: true), client: client
            ) { result = $0 }
            return (result, hits.all.map(\.profile))
        }
        #expect(found == .blocked(Decision(.block, .blockedDomain, rule: "blocked.example")))
        #expect(hitNames == ["kid"], "the hit is the deciding profile's")
    }

    /// A redirected connection verifying a dialled IPv6 address asks AAAA first; every other
    /// lookup asks A first, as a CONNECT's does, and stops at the first family that answers.
    @Test func aLookupPreferringIPv6AsksAAAAFirst() throws {
        let group = try EventLoopGroup(loopCount: 1, name: "test-resolver", clock: SystemClock())
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let snapshot = Self.snapshot(kidBlocks: false)
        let kid = try #require(snapshot.engine.profiles.named("kid"))
        let results = try loop.runSync(timeout: 10_000_000_000) { () -> [(ResolvedHost?, [DNSType])] in
            try [false, true].map { preferIPv6 in
                let upstream = BothFamilies()
                let pipeline = QueryPipeline(
                    snapshot: snapshot, cache: ResponseCache(capacity: 10, serveStaleMax: 0), hits: Hits())
                let driver = QueryDriver(loop: loop, pipeline: pipeline, upstream: upstream)
                var result: ResolvedHost?
                ProxyResolver(driver: driver).lookup(
                    HostQuery(
                        name: try QueryName.parse("www.example.org"), profile: kid, inspect: true,
                        preferIPv6: preferIPv6),
                    client: IPAddress("192.168.1.20")!
                ) { result = $0 }
                return (result, upstream.asked)
            }
        }
        #expect(results[0].0 == .addresses([IPAddress("192.0.2.7")!]))
        #expect(results[0].1 == [.a])
        #expect(results[1].0 == .addresses([IPAddress("2001:db8::7")!]))
        #expect(results[1].1 == [.aaaa])
    }
}
