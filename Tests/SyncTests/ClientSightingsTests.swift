import DomainMatch
import Policy
import Store
import TestSupport
import Testing

@testable import Sync

/// The devices each profile served (docs/sync.md#hits): counted per query by the proxies,
/// written by the flush, one row per device.
@Suite(.blocking) struct ClientSightingsTests {
    let phone = MACAddress("02:00:00:00:00:0a")
    let tablet = IPAddress("192.168.1.30")

    @Test func countersNameEachClientAndStartAfreshAfterADrain() throws {
        let counters = ActivityCounters()
        let first = SeenClient(address: IPAddress("192.168.1.20"), mac: phone)
        for _ in 0..<3 { counters.recordQuery(from: first) }
        counters.recordQuery(from: SeenClient(address: tablet, mac: nil))
        let drained = counters.drain()
        #expect(drained.queries == 4)
        #expect(drained.clients == [first: 3, SeenClient(address: tablet, mac: nil): 1])
        #expect(counters.drain().clients.isEmpty)
        #expect(counters.drain().queries == 0)
    }

    @Test func aSpoofingClientCannotGrowTheTableWithoutEnd() {
        let counters = ActivityCounters()
        let extra = 10
        for index in 0..<(ActivityCounters.clientCap + extra) {
            counters.recordQuery(from: SeenClient(address: .v4(0x0A00_0000 + UInt32(index)), mac: nil))
        }
        let drained = counters.drain()
        // Every query counts; only the first `clientCap` clients are named.
        #expect(drained.queries == ActivityCounters.clientCap + extra)
        #expect(drained.clients.count == ActivityCounters.clientCap)
    }

    @Test func aPhoneFromTwoAddressesIsOneDeviceByItsMAC() {
        let rows = HitFlusher.sightings(
            [
                SeenClient(address: IPAddress("2001:db8::1"), mac: phone): 2,
                SeenClient(address: IPAddress("2001:db8::2"), mac: phone): 5,
                SeenClient(address: tablet, mac: nil): 1,
            ], profile: "kid", now: 500)
        #expect(rows.map(\.client) == ["02:00:00:00:00:0a", "192.168.1.30"])
        #expect(rows.map(\.queries) == [7, 1])
        #expect(rows[0].mac == "02:00:00:00:00:0a" && rows[0].address?.hasPrefix("2001:db8::") == true)
        #expect(rows[1].mac == nil && rows[1].address == "192.168.1.30")
        #expect(rows.allSatisfy { $0.profile == "kid" && $0.firstSeen == 500 && $0.lastSeen == 500 })
    }

    @Test func theFlushWritesEachProfilesDevicesToTheStore() throws {
        let scratch = try ScratchDirectory("pg-sightings")
        let store = try Store.open(directory: scratch.path, now: 1000)
        let kid = ActivityCounters()
        let teen = ActivityCounters()
        kid.recordQuery(from: SeenClient(address: IPAddress("192.168.1.20"), mac: phone))
        teen.recordQuery(from: SeenClient(address: tablet, mac: nil))
        teen.recordQuery(from: SeenClient(address: tablet, mac: nil))
        let flusher = HitFlusher(aggregator: HitAggregator(), store: store, queueMax: 100)
        try flusher.flush(activity: ["kid": kid, "teen": teen], versions: [:], now: 2000)
        let seen = try store.sightings(since: 1000)
        #expect(seen.map(\.profile) == ["kid", "teen"])
        #expect(seen.map(\.client) == ["02:00:00:00:00:0a", "192.168.1.30"])
        #expect(seen.map(\.queries) == [1, 2])
        // A flush with nothing new leaves the rows as they were.
        try flusher.flush(activity: ["kid": kid, "teen": teen], versions: [:], now: 2005)
        #expect(try store.sightings(since: 2001).isEmpty)
    }

    /// The flush counts each profile's blocks by reason (`category:adult` under `category`)
    /// and by category, read from the window's bytes.
    @Test func theFlushCountsEachProfilesBlocksByReasonAndCategory() throws {
        let scratch = try ScratchDirectory("pg-activity")
        let store = try Store.open(directory: scratch.path, now: 1000)
        let aggregator = HitAggregator()
        let adult = Decision(.block, .category, rule: "adult.example", category: .adult)
        let gaming = Decision(.block, .category, rule: "games.example", category: .gaming)
        let downtime = Decision(.block, .downtime)
        let hits: [(String, String, Decision)] = [
            ("kid", "www.adult.example", adult), ("kid", "www.adult.example", adult), ("kid", "a.example", downtime),
            ("teen", "x.games.example", gaming), ("teen", "b.example", downtime), ("teen", "c.example", downtime),
        ]
        for (index, (profile, name, decision)) in hits.enumerated() {
            aggregator.record(
                Hit(
                    profile: profile, name: name, decision: decision, client: tablet, source: .dns,
                    time: 2000 + Int64(index)))
        }
        let counters = ["kid": ActivityCounters(), "teen": ActivityCounters()]
        let flusher = HitFlusher(aggregator: aggregator, store: store, queueMax: 100)
        try flusher.flush(activity: counters, versions: [:], now: 2010)
        let kid = try store.unsentActivity(profile: "kid", before: 7200)
        let teen = try store.unsentActivity(profile: "teen", before: 7200)
        #expect(kid.map(\.blocksByReason) == [["category": 2, "downtime": 1]])
        #expect(kid.map(\.blocksByCategory) == [["adult": 2]])
        #expect(teen.map(\.blocksByReason) == [["category": 1, "downtime": 2]])
        #expect(teen.map(\.blocksByCategory) == [["gaming": 1]])
    }
}
