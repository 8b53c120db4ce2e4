import DomainMatch
import Glibc
import TestSupport
import Testing

@testable import Policy
@testable import Sync

@Suite(.blocking) struct HitAggregatorTests {
    /// These tests look at the window's storage with thousands of events a shard: a bound
    /// past them (the bound itself: HitBoundTests).
    static let pastTheBound = 1 << 16

    @Test func aPageLoadIsOneEventCountingItsQueries() {
        let aggregator = HitAggregator(eventsPerShard: Self.pastTheBound)
        let decision = Decision(.block, .category, rule: "adult.example", category: .adult)
        let client = IPAddress("192.168.1.20")
        for (offset, _) in ["A", "AAAA", "HTTPS"].enumerated() {
            aggregator.record(
                Hit(
                    profile: "kid", name: "www.adult.example", decision: decision, client: client, source: .dns,
                    time: 100 + Int64(offset)))
        }
        aggregator.record(
            Hit(
                profile: "kid", name: "www.adult.example", decision: decision, client: IPAddress("192.168.1.21"),
                source: .dns, time: 105))
        let events = aggregator.drain().sorted { $0.key.client < $1.key.client }
        #expect(events.map(\.count) == [3, 1])
        #expect(events[0].firstSeen == 100 && events[0].lastSeen == 102)
        #expect(
            events[0].key.reasonText == "category:adult" && events[0].category == .adult
                && events[0].rule == "adult.example")
        #expect(aggregator.drain().isEmpty)
    }

    /// An event keeps its key as bytes alone, and gives it back as it came, for every shape
    /// of client and source; a name's bytes that are not printable ASCII come back in the
    /// presentation form (RFC 1035 §5.1), the profile as it was.
    @Test(arguments: [
        (IPAddress?.none, HitSource.dns), (IPAddress("192.168.1.20"), .proxy),
        (IPAddress("2001:db8::1:2"), .transparent), (IPAddress("::"), .dns),
    ])
    func anEventsKeyIsReadBackFromItsBytes(client: IPAddress?, source: HitSource) {
        let aggregator = HitAggregator(eventsPerShard: Self.pastTheBound)
        let decision = Decision(.block, .blockedDomain, rule: "blocked.example")
        aggregator.record(
            Hit(
                profile: "Zoë's tablet", name: "www.bücher.blocked.example", decision: decision, client: client,
                source: source, time: 7))
        let events = aggregator.drain()
        #expect(events.count == 1)
        #expect(
            events.first?.key
                == HitAggregator.Key(
                    profile: "Zoë's tablet", name: #"www.b\195\188cher.blocked.example"#,
                    reasonText: decision.reasonText,
                    client: client?.description ?? "", source: source))
        #expect(events.first?.rule == "blocked.example")
    }

    /// A window after a burst holds thousands of events, and two windows are alive while
    /// one is flushed: an event's record is 48 bytes (it was 128 with its key's four
    /// strings), its identity and rule bytes beside it.
    /// What the flush counts per profile, read in place from the window, is what each event
    /// says: its profile, its reason text, its category and its count.
    @Test func eachEventsTallyIsReadInPlace() {
        let aggregator = HitAggregator(eventsPerShard: Self.pastTheBound)
        let decisions = [
            Decision(.block, .category, rule: "adult.example", category: .adult),
            Decision(.block, .blockedDomain, rule: "blocked.example"), Decision(.block, .downtime),
        ]
        for index in 0..<300 {
            aggregator.record(
                Hit(
                    profile: ["kid", "teen", "ünïcode"][index % 3], name: "n\(index % 50).example",
                    decision: decisions[index % decisions.count], client: IPAddress("192.168.1.\(index % 7)"),
                    source: index % 2 == 0 ? .dns : .proxy, time: 100 + Int64(index)))
        }
        let events = aggregator.drain()
        var tallies: [String] = []
        events.forEachTally { profile, reason, category, count in
            tallies.append(
                "\(String(decoding: profile, as: UTF8.self)) \(String(decoding: reason, as: UTF8.self)) "
                    + "\(category?.id ?? "-") \(count)")
        }
        let expected = events.map { "\($0.key.profile) \($0.key.reasonText) \($0.category?.id ?? "-") \($0.count)" }
        #expect(events.count > 100)
        #expect(tallies == expected)
    }

    @Test func anEventIsSmall() {
        #expect(WindowPages.recordSize <= 48)
    }

    /// What a window holds is in pages of its own, not on malloc's heap: recording a hit
    /// of a new event allocates nothing from malloc, and a burst of them leaves nothing
    /// there (docs/performance.md#the-heap-by-owner).
    @Test(.countsAllocationsAsShipped)
    func newEventsTakeNothingFromMalloc() throws {
        let aggregator = HitAggregator(eventsPerShard: Self.pastTheBound)
        let decision = Decision(.block, .category, rule: "adult.example", category: .adult)
        let hits = try (0..<6_000).map { index in
            Hit(
                profile: "kid", name: try QueryName.parse("n\(index).adult.example"), decision: decision,
                client: IPAddress("192.168.1.20"), source: .dns, time: 100 + Int64(index))
        }
        // The shard's scratch storage is made once.
        aggregator.record(hits[0])
        #expect(Allocations.count { aggregator.record(hits[1]) } == 0)
        let kept = Allocations.retainedBytes {
            for index in 2..<3_000 { aggregator.record(hits[index]) }
        }
        #expect(kept == 0, "recording 2,998 new events kept \(kept) bytes of heap")
        // Found again after the table grew: counted, not added.
        for hit in hits[..<3_000] { aggregator.record(hit) }
        for hit in hits[3_000...] { aggregator.record(hit) }
        let events = aggregator.drain()
        #expect(events.count == 6_000)
        #expect(events.map(\.count) == Array(repeating: 2, count: 3_000) + Array(repeating: 1, count: 3_000))
        #expect(events[5_999].key.name == "n5999.adult.example" && events[5_999].rule == "adult.example")
    }

    /// The rule is the latest hit's: a longer one is written after the window's bytes, a
    /// shorter or equal one over the event's own, and a hit without a rule keeps it.
    @Test func anEventsRuleIsTheLatestHitsRule() {
        let aggregator = HitAggregator(eventsPerShard: Self.pastTheBound)
        let client = IPAddress("192.168.1.20")
        // The same identity (profile, name, reason text, client, source) with and without a rule.
        func hit(_ rule: String?, _ time: Int64) -> Hit {
            Hit(
                profile: "kid", name: "a.b.example", decision: Decision(.block, .downtime), rule: rule,
                client: client, source: .proxy, time: time)
        }
        for (time, rule) in ["b.example", "a.b.example", "x.example", "", "b.example"].enumerated() {
            aggregator.record(hit(rule, Int64(time)))
            let window = aggregator.drain()
            #expect(window.count == 1 && window.first?.rule == rule)
            aggregator.restore(window)
        }
        aggregator.record(hit("a.b.example", 10))
        aggregator.record(hit(nil, 11))
        let events = aggregator.drain()
        #expect(events.count == 1 && events.first?.count == 7 && events.first?.rule == "a.b.example")
        #expect(events.first?.firstSeen == 0 && events.first?.lastSeen == 11)
        aggregator.record(hit(nil, 12))
        #expect(aggregator.drain().first?.rule == nil)
    }

    /// `count` hits of distinct names from one profile and one client (so one shard), the
    /// hit of name `index` at `100 + index` seconds when `spread`, else all at 100.
    static func distinctHits(_ count: Int, spread: Bool = false) -> [Hit] {
        let decision = Decision(.block, .category, rule: "adult.example", category: .adult)
        return (0..<count).map { index in
            Hit(
                profile: "kid", name: "n\(index).adult.example", decision: decision,
                client: IPAddress("192.168.1.20"), source: .dns, time: 100 + (spread ? Int64(index) : 0))
        }
    }

    @Test func aDrainTakesEachShardsTableAndLeavesItEmpty() {
        // The drain swaps each shard's table for an empty one under its lock: the events
        // are handed over (one profile and one client: all in one shard). The shard's next
        // window is mapped for as many events; after an empty window, for none.
        let aggregator = HitAggregator(eventsPerShard: Self.pastTheBound)
        for hit in Self.distinctHits(3_000, spread: true) { aggregator.record(hit) }
        #expect(aggregator.capacities.max()! >= 3_000)
        let drained = aggregator.drain()
        #expect(drained.count == 3_000)
        // In the order they came.
        #expect(drained.map(\.firstSeen) == (0..<3_000).map { 100 + Int64($0) })
        #expect(aggregator.storageCounts.allSatisfy { $0.events == 0 })
        #expect(aggregator.capacities.max()! >= 3_000)
        #expect(aggregator.drain().isEmpty)
        #expect(aggregator.capacities.allSatisfy { $0 == 0 })
    }

    @Test func aBurstIsNotKeptForTheWindowsAfter() {
        let aggregator = HitAggregator(eventsPerShard: Self.pastTheBound)
        for hit in Self.distinctHits(10_000) { aggregator.record(hit) }
        #expect(aggregator.drain().count == 10_000)
        let room = aggregator.capacities.max()!
        #expect(room >= HitAggregator.presizedEvents && room < 2 * HitAggregator.presizedEvents, "\(room)")
    }

    /// Counted, not timed: a window as big as the one before it is recorded into without a
    /// `mmap` or `mremap` or a rebuilt table on the recording thread, and with fewer page
    /// faults, where the first window, growing as it fills, had each
    /// (docs/performance.md#where-the-slow-answers-are).
    @Test func aWindowAsBigAsTheLastCostsTheRecordingThreadNoMapping() {
        let aggregator = HitAggregator(eventsPerShard: Self.pastTheBound)
        let hits = Self.distinctHits(2_000)
        aggregator.record(hits[0])  // the shard's scratch storage, once
        func window() -> (events: Int, mappings: Int, rehashes: Int, faults: Int) {
            let before = Self.minorFaults()
            for hit in hits { aggregator.record(hit) }
            let faults = Self.minorFaults() - before
            let shard = aggregator.storageCounts.first { $0.events > 0 }!
            return (shard.events, shard.mappings, shard.rehashes, faults)
        }
        let first = window()
        #expect(first.events == 2_000)
        #expect(first.mappings > 3 && first.rehashes > 3, "the first window grew as it filled: \(first)")
        #expect(first.faults >= 20, "\(first)")
        _ = aggregator.drain()
        let second = window()
        #expect(second.events == 2_000)
        #expect(second.mappings == 3, "records, identities and slots, mapped by the drain: \(second)")
        #expect(second.rehashes == 0)
        // A sanitizer's shadow memory faults on its own schedule: pages are counted only
        // where malloc is ours.
        if Allocations.counted {
            #expect(second.faults < first.faults, "no new table's pages: \(first) \(second)")
        }
    }

    /// Minor page faults of the calling thread so far.
    static func minorFaults() -> Int {
        var usage = rusage()
        // RUSAGE_THREAD (1, Linux): Glibc's Swift overlay does not export the constant.
        getrusage(__rusage_who_t(1), &usage)
        return usage.ru_minflt
    }

    @Test(.countsAllocationsAsShipped)
    func aHitOfAnEventAlreadyThereAllocatesNothing() throws {
        // As the DNS proxy records it: the name as decided, the rule a suffix of it.
        let aggregator = HitAggregator(eventsPerShard: Self.pastTheBound)
        let name = try QueryName.parse("www.blocked.example")
        let engine = DecisionEngine(
            system: SystemRules(DecisionOptions()),
            categories: CategorySet(matcher: SetMatcher(lists: []), present: []),
            zone: .utc, profiles: ProfileTable(single: PolicyRules(Self.blocking("blocked.example"))))
        let decision = engine.decide(name, client: Client(address: IPAddress("192.168.1.20")!, mac: nil), at: 0)
        #expect(decision.reasonText == "blocked_domain:blocked.example")
        let hit = Hit(
            profile: "kid", name: name, decision: decision, client: IPAddress("192.168.1.20"), source: .dns, time: 100)
        aggregator.record(hit)
        aggregator.record(hit)
        #expect(Allocations.count { aggregator.record(hit) } == 0)
        let events = aggregator.drain()
        #expect(events.map(\.count) == [3])
        #expect(events.first?.key.name == "www.blocked.example" && events.first?.rule == "blocked.example")
    }

    static func blocking(_ name: String) -> CompiledPolicy {
        var policy = CompiledPolicy()
        policy.version = 1
        policy.webFilter.blockedDomains = [name]
        return policy
    }

    @Test func concurrentRecordingLosesNothing() async {
        let aggregator = HitAggregator(eventsPerShard: Self.pastTheBound)
        let decision = Decision(.block, .blockedDomain, rule: "x.example")
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<5000 {
                        aggregator.record(
                            Hit(
                                profile: "p", name: "n\(index % 50).x.example", decision: decision,
                                client: IPAddress("10.0.0.\(worker)"), source: .dns, time: Int64(index)))
                    }
                }
            }
        }
        #expect(aggregator.drain().reduce(0) { $0 + $1.count } == 20_000)
    }
}

@Suite(.blocking) struct StoreFailureTests {
    @Test func restoredEventsMergeWithWhatCameSinceAndCountOnce() {
        let aggregator = HitAggregator(eventsPerShard: HitAggregatorTests.pastTheBound)
        let decision = Decision(.block, .blockedDomain, rule: "x.example")
        func hit(_ time: Int64) -> Hit {
            Hit(
                profile: "p", name: "www.x.example", decision: decision, client: IPAddress("10.0.0.1"), source: .dns,
                time: time)
        }
        aggregator.record(hit(100))
        aggregator.record(hit(101))
        let failed = aggregator.drain()
        aggregator.record(hit(200))
        aggregator.restore(failed)
        let events = aggregator.drain()
        #expect(events.count == 1)
        #expect(events.first?.count == 3)
        #expect(events.first?.firstSeen == 100 && events.first?.lastSeen == 200)
        #expect(events.first?.rule == "x.example")
    }

    @Test func aFailingStoreIsSaidOnceAndItsRecoveryOnce() {
        let said = Said()
        let log = StoreHealth().filtering { event, _ in said.events.append(event) }
        for _ in 0..<3 { log("store_writable", []) }
        for _ in 0..<5 { log("store_failed", [("error", "disk full")]) }
        log("hits_merged", [])
        for _ in 0..<2 { log("store_writable", []) }
        log("store_failed", [])
        #expect(said.events == ["store_failed", "hits_merged", "store_writable", "store_failed"])
    }

    private final class Said {
        var events: [String] = []
    }
}
