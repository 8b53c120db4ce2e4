import TestSupport
import Testing

@testable import Store

@Suite(.blocking) struct HistoryTests {
    @Test func groupsByProfileAndDomainNewestFirst() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        try store.recordHistory([
            hit(
                "pornhub.com", reason: "category:adult", client: "10.0.0.2", count: 3, category: "adult", at: 1000,
                until: 1010),
            hit("pornhub.com", reason: "downtime", client: "10.0.0.3", count: 5, category: nil, at: 1020, until: 1030),
            hit(
                "pornhub.com", reason: "category:adult", client: "10.0.0.3", count: 4, category: "adult", at: 1400,
                until: 1400),
            hit("reddit.com", count: 1, at: 2000),
            hit("reddit.com", profile: "bob", count: 2, at: 1500),
        ])
        try store.recordHistory([hit("fortnite.com", reason: "category:gaming", category: "gaming", at: 1200)])
        let groups = try store.recentHits(since: 0)
        #expect(
            groups.map { "\($0.profile)/\($0.domain)" } == [
                "alice/reddit.com", "bob/reddit.com", "alice/pornhub.com", "alice/fortnite.com",
            ])
        #expect(
            groups[2]
                == HistoryGroup(
                    profile: "alice", domain: "pornhub.com", count: 12,
                    reasons: ["category:adult", "downtime"], categories: ["adult"],
                    clients: ["10.0.0.3", "10.0.0.2"], firstSeen: 1000, lastSeen: 1400))
        #expect(try store.recentHits(since: 0, profile: "bob").map(\.count) == [2])
        #expect(try store.recentHits(since: 1300).map(\.domain) == ["reddit.com", "reddit.com", "pornhub.com"])
        #expect(try store.recentHits(since: 3000).isEmpty)
    }

    @Test func flushesInOneBucketShareARow() throws {
        let fixture = try StoreFixture()
        let bucketStart = Store.historyBucketSeconds * 10_000
        for offset in stride(from: Int64(0), to: 300, by: 5) {
            try fixture.store.recordHistory([hit(at: bucketStart + offset)])
        }
        try fixture.store.recordHistory([hit(at: bucketStart + 300)])
        #expect(try fixture.store.testInteger("SELECT count(*) FROM hit_history") == 2)
        let group = try #require(try fixture.store.recentHits(since: 0).first)
        #expect(group.count == 61)
        #expect(group.firstSeen == bucketStart)
        #expect(group.lastSeen == bucketStart + 300)
    }

    @Test func historySurvivesDeliveryAndIsPruned() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let rows = [hit(at: 100), hit("old.example", at: 10, until: 20)]
        try store.enqueue(rows, maxRows: 100)
        try store.recordHistory(rows)
        let batch = try #require(try store.nextBatch(profile: "alice", now: testNow))
        try store.completeBatch(id: batch.id)
        #expect(try store.recentHits(since: 0).count == 2)
        #expect(try store.pruneHistory(before: 50) == 1)
        #expect(try store.recentHits(since: 0).map(\.domain) == ["reddit.com"])
    }
}
