import DNSWire
import DomainMatch
import Policy
import TestSupport
import Testing

@testable import DNSProxy

/// Allocations on the answer path, counted (not timed) on the calling thread by the test
/// executable's malloc (docs/performance.md#allocations-per-query): each stage of a cached
/// answer, and the whole path the UDP server takes, from a datagram in its receive slot to
/// the answer in a send slot. Counted in a release build (`scripts/allocations`), the
/// daemon's: the debug build allocates where the optimizer does not.
@Suite(.blocking) struct AllocationTests {
    typealias F = PipelineFixture

    /// Each stage twice first (first use builds tables), then counted.
    func count(_ body: () -> Void) -> Int {
        body()
        body()
        return Allocations.count(body)
    }

    @Test(.countsAllocationsAsShipped)
    func theChecksAroundACachedAnswerAllocateNothing() throws {
        let fixture = F()
        let query = F.query("example.org")
        let pending = try #require(fixture.receive(query).pending)
        let reply = F.reply(to: pending, answers: [F.a("example.org", 0xC000_0201)])
        _ = fixture.pipeline.complete(pending, reply: reply, now: F.noon)
        let snapshot = fixture.pipeline.snapshot
        let parsed = try DNSQuery.parse(query)
        let name = try #require(DomainName(wire: parsed.question.name.wire))
        let client = Client(address: F.client, mac: nil)
        let profile = snapshot.engine.profiles.choose(client)
        let local = snapshot.engine.zone.localDateTime(at: F.noon.unixSeconds)
        let key = CacheKey(pending.upstreamQuestion, dnssecOK: false, checkingDisabled: false)
        guard case .fresh = fixture.pipeline.cache.lookup(key, now: F.noon.monotonicMilliseconds) else {
            Issue.record("the answer was not cached")
            return
        }

        #expect(count { blackHole(try? DNSHeader(query)) } == 0, "the header")
        #expect(count { blackHole(snapshot.engine.profiles.choose(client)) } == 0, "choosing the profile")
        #expect(count { profile.activity.recordQuery(from: SeenClient(address: F.client, mac: nil)) } == 0)
        #expect(count { blackHole(snapshot.engine.zone.localDateTime(at: F.noon.unixSeconds)) } == 0, "the local time")
        #expect(count { snapshot.engine.recordUse(of: name, by: profile, at: F.noon.unixSeconds, local: local) } == 0)
        #expect(count { blackHole(snapshot.engine.hasBudget(name, rules: profile.rules)) } == 0, "the app budgets")
        let cache = fixture.pipeline.cache
        #expect(count { blackHole(cache.lookup(key, now: F.noon.monotonicMilliseconds)) } == 0, "the cache")
        #expect(count { blackHole(fixture.pipeline.cap(300, profile, snapshot, F.noon)) } == 0, "the TTL cap")
    }

    @Test(.countsAllocationsAsShipped)
    func aCachedAnswerFromReceiveSlotToSendSlotAllocatesNothing() throws {
        let path = try DatagramPath()
        path.upstream.answers[try DNSName("example.org")] = [F.a("example.org", 0xC000_0201)]
        let query = F.query("example.org")
        path.handle(query)
        #expect(path.handle(query), "answered from the cache, into a send slot")
        #expect(count { path.handle(query) } == 0)
    }

    /// An answer with names to decide (docs/dns.md#what-answers-may-carry) that are all
    /// allowed is served as cached: the decisions allocate nothing either.
    @Test(.countsAllocationsAsShipped)
    func aCachedAnswerWhoseTargetsAreAllowedAllocatesNothing() throws {
        let path = try DatagramPath(F(policy: F.strict))
        let owner = try DNSName("example.org")
        path.upstream.answers[owner] = [
            ResourceRecord(
                name: owner, ttl: 300, rdata: .mx(.init(preference: 10, exchange: try DNSName("mx.example.net"))))
        ]
        let query = F.query("example.org", .mx)
        path.handle(query)
        #expect(path.handle(query), "answered from the cache, into a send slot")
        #expect(count { path.handle(query) } == 0)
    }

    @Test(.countsAllocationsAsShipped)
    func aBlockAnswerFromReceiveSlotToSendSlotAllocatesNothing() throws {
        let path = try DatagramPath(F(policy: F.strict, hits: DiscardingHitRecorder()))
        for name in ["www.adult.example", "a.blocked.example"] {
            let query = F.query(name)
            #expect(path.handle(query), "answered into a send slot")
            #expect(count { path.handle(query) } == 0, "\(name)")
        }
    }

    @Test(.countsAllocationsAsShipped)
    func aSafeSearchRewriteFromReceiveSlotToSendSlotAllocatesNothing() throws {
        let path = try DatagramPath(F(policy: F.strict))
        path.upstream.answers[try DNSName("forcesafesearch.google.com")] = [
            F.a("forcesafesearch.google.com", 0xD8EF_2678)
        ]
        let query = F.query("www.google.com")
        path.handle(query)
        #expect(path.handle(query), "the target's answer from the cache, into a send slot")
        #expect(count { path.handle(query) } == 0)
    }

    @Test(.countsAllocationsAsShipped)
    func aCachedAnswerForASafeSearchProfileAllocatesNothing() throws {
        // Every allowed name of such a profile is looked up in the safe-search table.
        let path = try DatagramPath(F(policy: F.strict))
        path.upstream.answers[try DNSName("www.example.org")] = [F.a("www.example.org", 0xC000_0201)]
        let query = F.query("www.example.org")
        path.handle(query)
        #expect(path.handle(query))
        #expect(count { path.handle(query) } == 0)
    }

    @Test(.enabled(if: Allocations.counted, "a sanitizer's runtime owns malloc"))
    func theCounterSeesAnAllocation() {
        // The counter itself: a fresh array of a size only known at run time is one.
        let size = Int.random(in: 100...200)
        #expect(Allocations.count { _ = [UInt8](repeating: 1, count: size) } >= 1)
        #expect(Allocations.count {} == 0)
    }
}
