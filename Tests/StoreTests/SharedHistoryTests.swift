import TestSupport
import Testing

@testable import Store

/// The hit history and hourly counts between this gateway's store and the shared one
/// (docs/two-gateways.md): what waits to be written (whole counts, again as they grow; a
/// row folded away as gone), and the other gateways' rows added to the page's day as
/// one row per name, bucket and client.
@Suite(.blocking) struct SharedHistoryTests {
    @Test func aRowWaitsUntilWrittenAndAgainWhenItGrows() throws {
        let store = try StoreFixture().store
        try store.recordHistory([hit("reddit.com", count: 2, at: 1_000), hit("tiktok.com", count: 1, at: 1_010)])
        let waiting = try store.unsharedHistory(limit: 10)
        #expect(waiting.map(\.domain) == ["reddit.com", "tiktok.com"])
        #expect(waiting.map(\.count) == [2, 1])
        try store.markHistoryShared(waiting)
        #expect(try store.unsharedHistory(limit: 10).isEmpty)

        // Counted again in the same bucket: the whole count waits, once.
        try store.recordHistory([hit("reddit.com", count: 3, at: 1_020)])
        #expect(try store.unsharedHistory(limit: 10).map { "\($0.domain) \($0.count)" } == ["reddit.com 5"])
        // Marked with a count that is no longer the row's (counted again meanwhile): still waiting.
        let stale = try store.unsharedHistory(limit: 10)
        try store.recordHistory([hit("reddit.com", count: 1, at: 1_030)])
        try store.markHistoryShared(stale)
        #expect(try store.unsharedHistory(limit: 10).map(\.count) == [6])
    }

    @Test func aRowFoldedAwayAfterItWasWrittenIsWrittenAsGone() throws {
        let store = try StoreFixture().store
        try store.recordHistory((0..<6).map { hit("site\($0).example", at: 1_000 + Int64($0)) })
        try store.markHistoryShared(try store.unsharedHistory(limit: 100))
        // Over a bound of 4 rows: the oldest are folded or dropped here.
        try store.recordHistory([hit("late.example", at: 2_000)], maxRows: 4)
        let waiting = try store.unsharedHistory(limit: 100)
        let gone = waiting.filter { $0.count == 0 }.map(\.domain)
        #expect(!gone.isEmpty && gone.allSatisfy { $0.hasPrefix("site") }, "\(waiting)")
        // What the fold made, and the new row, are written as rows of their own.
        #expect(waiting.contains { $0.domain == "late.example" && $0.count == 1 })
        try store.markHistoryShared(waiting)
        #expect(try store.unsharedHistory(limit: 100).isEmpty)
        // Pruned by age: nothing to write (every gateway prunes at the same age).
        try store.pruneHistory(before: 3_000)
        #expect(try store.unsharedHistory(limit: 100).isEmpty)
    }

    /// A row gone before it was ever written is written as gone too (it may be on its way
    /// there); a row made again under a gone key is written whole, and not as gone.
    @Test func aRowGoneAndBackIsWrittenAsItIsNow() throws {
        let store = try StoreFixture().store
        try store.recordHistory([hit("a.example", at: 1_000)])
        try store.testExecute("DELETE FROM hit_history WHERE domain = 'a.example'")
        #expect(try store.unsharedHistory(limit: 10).map { "\($0.domain) \($0.count)" } == ["a.example 0"])
        try store.recordHistory([hit("a.example", count: 2, at: 1_000)])
        #expect(try store.unsharedHistory(limit: 10).map { "\($0.domain) \($0.count)" } == ["a.example 2"])
    }

    @Test func anHourWaitsWithAllItsCountsUntilWritten() throws {
        let store = try StoreFixture().store
        try store.addActivity(
            profile: "alice", hourStart: 3_600, queries: 10, blocksByReason: ["category": 2],
            blocksByCategory: ["adult": 2])
        var hours = try store.unsharedHours(limit: 10)
        #expect(hours.count == 1)
        #expect(
            Set(hours[0].facts.map { "\($0.kind)/\($0.name)=\($0.count)" }) == [
                "queries/=10", "reason/category=2", "category/adult=2",
            ])
        try store.markHoursShared(hours)
        #expect(try store.unsharedHours(limit: 10).isEmpty)
        try store.addActivity(profile: "alice", hourStart: 3_600, queries: 5)
        hours = try store.unsharedHours(limit: 10)
        #expect(hours.first?.facts.first { $0.kind == "queries" }?.count == 15)
    }

    @Test func theOtherGatewaysDayIsAddedToThisOnesOnThePage() throws {
        let store = try StoreFixture().store
        try store.recordHistory([
            hit("reddit.com", client: "10.0.0.20", count: 2, at: 1_000, until: 1_100),
            hit("tiktok.com", reason: "limit:tiktok", client: "10.0.0.20", count: 1, at: 1_200),
        ])
        try store.addActivity(profile: "alice", hourStart: 0, queries: 10, blocksByReason: ["blocked_domain": 2])
        func fact(_ domain: String, count: Int, at: Int64) -> HistoryFact {
            HistoryFact(
                profile: "alice", domain: domain, reason: "blocked_domain:reddit.com", client: "10.0.0.20",
                source: "dns", bucket: at / Store.historyBucketSeconds, matched: domain, category: nil, count: count,
                firstSeen: at, lastSeen: at + 50, names: 0)
        }
        try store.mergeSharedHistory(
            history: [
                ("pi-2", fact("reddit.com", count: 3, at: 1_010)), ("pi-2", fact("youtube.com", count: 1, at: 900)),
            ],
            activity: [
                ("pi-2", ActivityFact(profile: "alice", hourStart: 0, kind: "queries", name: "", count: 7)),
                (
                    "pi-2",
                    ActivityFact(profile: "alice", hourStart: 0, kind: "reason", name: "blocked_domain", count: 4)
                ),
                ("pi-2", ActivityFact(profile: "alice", hourStart: 3_600, kind: "queries", name: "", count: 1)),
            ], pulled: 42)
        #expect(try store.sharedHistoryMark() == 42)

        // The same name, bucket and client on both gateways: one row, its counts added.
        let rows = try store.history(profile: "alice", before: .max, limit: 10)
        #expect(rows.map { "\($0.domain) \($0.count)" } == ["tiktok.com 1", "reddit.com 5", "youtube.com 1"])
        #expect(rows[1].firstSeen == 1_000 && rows[1].lastSeen == 1_100)
        // Paged by the row's last sight, whichever gateway saw it.
        #expect(try store.history(profile: "alice", before: 1_100, limit: 10).map(\.domain) == ["youtube.com"])
        #expect(try store.history(profile: "alice", before: .max, limit: 10, domain: "youtube.com").count == 1)
        #expect(
            try store.hours(profile: "alice", from: 0, to: .max) == [
                DayHour(hourStart: 0, queries: 17, blocks: 6), DayHour(hourStart: 3_600, queries: 1, blocks: 0),
            ])
        #expect(
            try store.blockTotals(profile: "alice", from: 0).byReason.map { "\($0.name) \($0.count)" } == [
                "blocked_domain 6"
            ])

        // Read again as it grew there: replaced, not added; gone there: gone here.
        try store.mergeSharedHistory(
            history: [
                ("pi-2", fact("reddit.com", count: 4, at: 1_010)), ("pi-2", fact("youtube.com", count: 0, at: 900)),
            ],
            activity: [("pi-2", ActivityFact(profile: "alice", hourStart: 0, kind: "queries", name: "", count: 8))],
            pulled: 50)
        #expect(
            try store.history(profile: "alice", before: .max, limit: 10).map { "\($0.domain) \($0.count)" } == [
                "tiktok.com 1", "reddit.com 6",
            ])
        #expect(try store.dayCounts(profile: "alice", since: 0) == (queries: 19, blocks: 6))

        // A new database: the other gateways' rows are read again from it.
        try store.forgetShared()
        #expect(try store.sharedHistoryMark() == 0)
        #expect(try store.history(profile: "alice", before: .max, limit: 10).map(\.count) == [1, 2])
        #expect(try store.unsharedHistory(limit: 10).count == 2)
    }

    /// The devices seen: each waits to be written when counted again; another gateway's
    /// sighting of the same device is one device, its queries added, seen from the
    /// earliest to the latest, at the address it used last.
    @Test func aDeviceSeenByBothGatewaysIsOneDevice() throws {
        let store = try StoreFixture().store
        func seen(_ client: String, address: String, first: Int64, last: Int64, queries: Int) -> ClientSighting {
            ClientSighting(
                profile: "alice", client: client, address: address, mac: nil, firstSeen: first, lastSeen: last,
                queries: queries)
        }
        try store.recordSightings([seen("10.0.0.20", address: "10.0.0.20", first: 1_000, last: 1_100, queries: 4)])
        let waiting = try store.unsharedSightings(limit: 10)
        #expect(waiting.map(\.queries) == [4])
        try store.markSightingsShared(waiting)
        #expect(try store.unsharedSightings(limit: 10).isEmpty)
        try store.recordSightings([seen("10.0.0.20", address: "10.0.0.20", first: 1_200, last: 1_200, queries: 1)])
        #expect(try store.unsharedSightings(limit: 10).map(\.queries) == [5])

        try store.mergeSharedHistory(
            history: [], activity: [],
            sightings: [
                ("pi-2", seen("10.0.0.20", address: "10.0.0.21", first: 900, last: 1_300, queries: 3)),
                ("pi-2", seen("10.0.0.30", address: "10.0.0.30", first: 1_000, last: 1_000, queries: 2)),
            ], pulled: 5)
        let devices = try store.sightings(since: 1_150)
        #expect(devices.map(\.client) == ["10.0.0.20"], "the other device was last seen before")
        #expect(devices.first?.queries == 8 && devices.first?.firstSeen == 900 && devices.first?.lastSeen == 1_300)
        #expect(devices.first?.address == "10.0.0.21")
        #expect(try store.sightings(since: 0).map(\.client) == ["10.0.0.20", "10.0.0.30"])
        // A device another gateway saw first is not new here.
        #expect(
            try store.recordSightings([seen("10.0.0.30", address: "10.0.0.30", first: 1_400, last: 1_400, queries: 1)])
                .isEmpty)
        try store.pruneSightings(before: 1_250)
        #expect(try store.sightings(since: 0).map(\.client) == ["10.0.0.30", "10.0.0.20"])
        try store.pruneSightings(before: 1_500)
        #expect(try store.sightings(since: 0).isEmpty)
    }
}
