import TestSupport
import Testing

@testable import Store

/// The queue bound (`hit_queue_max`, docs/sync.md#bounds): the oldest rows merged per
/// name with client `*`, then folded per rule and per reason, then dropped; back to 90 % of
/// the bound; rows taken reported once as `merged_events`.
@Suite(.blocking) struct QueueBoundTests {
    @Test func oldestRowsMergeWithClientStar() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let old = (0..<10).map {
            hit(
                "m.example", reason: "category:adult", client: "10.0.0.\($0)", count: $0 + 1,
                matched: "m\($0)", category: "adult", at: Int64(100 + $0), until: Int64(150 + $0))
        }
        let new = (0..<5).map { hit("n\($0).example", at: 1000) }
        // Bound 8, back to 7: the oldest 8 rows (one name) become one row; that is enough.
        #expect(try store.enqueue(old + new, maxRows: 8) == 7)
        #expect(try store.testInteger("SELECT count(*) FROM hit_queue") == 8)
        #expect(try store.queueCounts(profile: "alice") == (queued: 8, batched: 0, deadLettered: 0, mergedPending: 7))
        #expect(try store.boundTotals(profile: "alice") == HitBoundTotals(queueRows: 7))
        let batch = try #require(try store.nextBatch(profile: "alice", now: testNow))
        #expect(batch.mergedEvents == 7)
        #expect(
            batch.events.first
                == hit(
                    "m.example", reason: "category:adult", client: "*", count: 36, matched: "m7",
                    category: "adult", at: 100, until: 157))
        #expect(batch.events.filter { $0.domain == "m.example" }.map(\.client) == ["*", "10.0.0.8", "10.0.0.9"])
        #expect(batch.events.reduce(0) { $0 + $1.count } == 55 + 5)
        #expect(try store.queueCounts(profile: "alice").mergedPending == 0)
        try store.completeBatch(id: batch.id)
        // Reported once: the next batch starts from zero.
        try store.enqueue([hit()], maxRows: 8)
        #expect(try store.nextBatch(profile: "alice", now: testNow)?.mergedEvents == 0)
    }

    @Test func oldRowsOfOneReasonFoldIntoStarWhenTheirRulesDiffer() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let rows = (0..<20).map {
            hit("c\($0).example", reason: "category:adult", matched: "c\($0).example", category: "adult", at: Int64($0))
        }
        #expect(try store.enqueue(rows, maxRows: 10) == 10)
        let batch = try #require(try store.nextBatch(profile: "alice", now: testNow)).events
        var folded = hit(
            "*", reason: "category:adult", client: "*", count: 11, matched: nil, category: "adult", at: 0, until: 10)
        folded.names = 11
        #expect(batch.first == folded)
        #expect(batch.dropFirst().map(\.domain) == (11..<20).map { "c\($0).example" })
    }

    @Test func aMergedRowAbsorbsAnEarlierStarRowOfTheSameKey() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        try store.enqueue(
            [
                hit(client: "a", at: 1), hit(client: "b", at: 2), hit("x.example", at: 3),
                hit(client: "*", count: 4, at: 10),
            ], maxRows: 100)
        #expect(try store.enqueue([], maxRows: 3) == 2)
        let rows = try #require(try store.nextBatch(profile: "alice", now: testNow)).events
        #expect(rows == [hit(client: "*", count: 6, at: 1, until: 10), hit("x.example", at: 3)])
    }

    @Test func randomNamesFoldIntoTheirRuleWithEveryCountKept() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let rows = (0..<1000).map {
            hit(
                "x\($0).blocked.example", reason: "blocked_domain:blocked.example", matched: "blocked.example",
                at: Int64($0))
        }
        let merged = try store.enqueue(rows, maxRows: 100)
        let left = try store.testInteger("SELECT count(*) FROM hit_queue")
        #expect(left <= 100)
        #expect(merged == 1000 - left)
        #expect(try store.testInteger("SELECT sum(count) FROM hit_queue") == 1000)
        // Every name is accounted for once: as itself or among a folded row's names.
        #expect(try store.testInteger("SELECT sum(CASE WHEN names = 0 THEN 1 ELSE names END) FROM hit_queue") == 1000)
        let oldest = try #require(try store.nextBatch(profile: "alice", maxEvents: 1, now: testNow)).events.first
        #expect(oldest?.domain == "*.blocked.example")
        #expect(oldest?.client == "*")
        #expect(try store.testInteger("SELECT max(first_seen) FROM hit_queue WHERE names = 0") == 999)
    }

    @Test func rowsOfTheirOwnRuleAndReasonAreDroppedOldestFirst() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let rows = (0..<50).map {
            hit("d\($0).example", reason: "blocked_domain:d\($0).example", matched: "d\($0).example", at: Int64($0))
        }
        #expect(try store.enqueue(rows, maxRows: 10) == 40)
        #expect(
            try store.testRows("SELECT domain FROM hit_queue ORDER BY first_seen") { $0.text(0) }
                == (40..<50).map { "d\($0).example" })
        #expect(try store.queueCounts(profile: "alice").mergedPending == 40)
    }

    @Test func rowsOfDifferentSourcesAreKeptApart() throws {
        let fixture = try StoreFixture()
        #expect(
            try fixture.store.enqueue(
                [
                    hit(client: "a", source: "dns", at: 1), hit(client: "b", source: "proxy", at: 2),
                    hit("x.example", at: 3),
                ], maxRows: 2) == 1)
        let rows = try #require(try fixture.store.nextBatch(profile: "alice", now: testNow)).events
        // Over the bound after the oldest half, the steps run over every row before any is
        // dropped: the two DNS rows of one rule fold (no count lost), the proxy row stays.
        #expect(rows.map(\.source).sorted() == ["dns", "proxy"], "\(rows)")
        #expect(
            rows.first { $0.source == "dns" }.map { ($0.domain, $0.count, $0.client) } ?? ("", 0, "")
                == ("*.reddit.com", 2, "*"))
        #expect(rows.first { $0.source == "proxy" } == hit(client: "b", source: "proxy", at: 2))
    }

    @Test func batchedRowsAreNeverMerged() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        try store.enqueue((0..<4).map { hit(client: "10.0.0.\($0)", at: Int64($0)) }, maxRows: 100)
        let batch = try #require(try store.nextBatch(profile: "alice", now: testNow))
        #expect(try store.enqueue((0..<4).map { hit(client: "10.0.1.\($0)", at: Int64(10 + $0)) }, maxRows: 5) == 3)
        #expect(try store.nextBatch(profile: "alice", now: testNow) == batch)
        #expect(try store.queueCounts(profile: "alice") == (queued: 1, batched: 4, deadLettered: 0, mergedPending: 3))
    }

    @Test func theHistoryIsBoundedInItsBucketsAndCounted() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        // Ten 5-minute buckets of 100 random names each, from two clients.
        let rows = (0..<1000).map {
            hit(
                "r\($0).blocked.example", reason: "blocked_domain:blocked.example", client: "10.0.0.\($0 % 2)",
                matched: "blocked.example", at: testNow + Int64($0 / 100) * 300)
        }
        let merged = try store.recordHistory(rows, maxRows: 200)
        let left = try store.testInteger("SELECT count(*) FROM hit_history")
        #expect(left <= 200)
        #expect(merged == 1000 - left)
        #expect(try store.testInteger("SELECT sum(count) FROM hit_history") == 1000)
        #expect(try store.boundTotals(profile: "alice").historyRows == merged)
        // Each bucket folded keeps its own row: `hits --since` still sees when.
        #expect(try store.testInteger("SELECT count(DISTINCT bucket) FROM hit_history WHERE names > 0") >= 5)
        let groups = try store.recentHits(since: 0)
        let folded = try #require(groups.first { $0.domain == "*.blocked.example" })
        #expect(folded.clients == ["*"])
        #expect(groups.reduce(0) { $0 + ($1.names > 0 ? $1.names : 1) } == 1000)
        // Within the bound nothing changes.
        #expect(try store.recordHistory([hit("z.example")], maxRows: 1000) == 0)
    }

    /// Random hits, random bounds, random delivery: the queue stays within its bound, no
    /// count is invented or lost but with a dropped row, and every row merged or dropped is
    /// reported exactly once as merged_events.
    @Test(arguments: 1...24)
    func countsAndMergedEventsAreConserved(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let fixture = try StoreFixture()
        let store = fixture.store
        let maxRows = Int.random(in: 1...30, using: &random)
        let profiles = ["alice", "bob"]
        var enqueuedCount = 0
        var droppedCount = 0
        var deliveredCount = 0
        var mergedReturned = 0
        var mergedDelivered = 0
        var inFlight: [String: Batch] = [:]
        struct Key: Hashable { let profile, domain, reason, client, source: String }

        for step in 0..<60 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<6:
                let rows = (0..<Int.random(in: 0...12, using: &random)).map { _ in
                    let first = Int64.random(in: 0...1000, using: &random)
                    return hit(
                        "d\(Int.random(in: 0..<6, using: &random)).example",
                        profile: profiles.randomElement(using: &random)!,
                        reason: ["category:adult", "downtime"].randomElement(using: &random)!,
                        client: "10.0.0.\(Int.random(in: 0..<4, using: &random))",
                        source: ["dns", "proxy"].randomElement(using: &random)!,
                        count: Int.random(in: 1...5, using: &random), at: first,
                        until: first + Int64.random(in: 0...60, using: &random),
                        policyVersion: Int.random(in: 1...2, using: &random))
                }
                let queuedKeys = Set(
                    try store.testRows(
                        """
                        SELECT profile, domain, reason, client, source FROM hit_queue WHERE batch_id IS NULL
                        """
                    ) {
                        Key(
                            profile: $0.text(0), domain: $0.text(1), reason: $0.text(2), client: $0.text(3),
                            source: $0.text(4))
                    })
                let inserted = Set(
                    rows.map {
                        Key(
                            profile: $0.profile, domain: $0.domain, reason: $0.reason,
                            client: $0.client, source: $0.source)
                    }
                ).subtracting(queuedKeys).count
                let before = try store.testInteger("SELECT count(*) FROM hit_queue")
                let countsBefore = try store.testInteger("SELECT coalesce(sum(count), 0) FROM hit_queue")
                let merged = try store.enqueue(rows, maxRows: maxRows)
                let after = try store.testInteger("SELECT count(*) FROM hit_queue")
                let countsAfter = try store.testInteger("SELECT coalesce(sum(count), 0) FROM hit_queue")
                let dropped = countsBefore + rows.reduce(0) { $0 + $1.count } - countsAfter
                #expect(dropped >= 0, "seed \(seed) step \(step)")
                // Only what is still over the bound after merging is dropped.
                let batchedNow = try store.testInteger("SELECT count(*) FROM hit_queue WHERE batch_id IS NOT NULL")
                // With batches in flight at the bound, the newest open row is kept.
                let allowed = batchedNow >= maxRows ? batchedNow + 1 : maxRows
                #expect(dropped == 0 || after == allowed, "seed \(seed) step \(step)")
                droppedCount += dropped
                enqueuedCount += rows.reduce(0) { $0 + $1.count }
                mergedReturned += merged
                #expect(after == before + inserted - merged, "seed \(seed) step \(step)")
                #expect(after <= allowed, "seed \(seed) step \(step): \(after) rows over \(maxRows)")
            case 6..<8:
                let profile = profiles.randomElement(using: &random)!
                let batch = try store.nextBatch(
                    profile: profile, maxEvents: Int.random(in: 1...10, using: &random), now: testNow)
                if let known = inFlight[profile] { #expect(batch == known, "seed \(seed) step \(step)") }
                inFlight[profile] = batch
            default:
                guard let profile = inFlight.keys.sorted().randomElement(using: &random), let batch = inFlight[profile]
                else { continue }
                // 202 or 400: either way the batch's counts are accounted for, once.
                if Bool.random(using: &random) {
                    try store.completeBatch(id: batch.id)
                    deliveredCount += batch.events.reduce(0) { $0 + $1.count }
                    mergedDelivered += batch.mergedEvents
                } else {
                    try store.deadLetter(batchID: batch.id, reason: "HTTP 400", now: testNow)
                }
                inFlight[profile] = nil
            }
            let stored = try store.testInteger("SELECT coalesce(sum(count), 0) FROM hit_queue")
            let dead = try store.testInteger("SELECT coalesce(sum(count), 0) FROM dead_letter")
            #expect(stored + deliveredCount + dead + droppedCount == enqueuedCount, "seed \(seed) step \(step)")
            let pending = try store.testInteger("SELECT coalesce(sum(merged_pending), 0) FROM hit_merge_pending")
            let batched = try store.testInteger("SELECT coalesce(sum(merged_events), 0) FROM hit_batches")
            let deadMerged = try store.testInteger("SELECT coalesce(sum(merged_events), 0) FROM dead_letter_batches")
            #expect(pending + batched + deadMerged + mergedDelivered == mergedReturned, "seed \(seed) step \(step)")
        }
        #expect(mergedReturned > 0, "seed \(seed) never reached its bound of \(maxRows)")

        // Drain: everything queued is delivered; nothing is left behind or counted twice.
        for profile in profiles {
            while let batch = try store.nextBatch(profile: profile, now: testNow) {
                try store.completeBatch(id: batch.id)
                deliveredCount += batch.events.reduce(0) { $0 + $1.count }
                mergedDelivered += batch.mergedEvents
            }
        }
        let dead = try store.testInteger("SELECT coalesce(sum(count), 0) FROM dead_letter")
        let deadMerged = try store.testInteger("SELECT coalesce(sum(merged_events), 0) FROM dead_letter_batches")
        #expect(try store.testInteger("SELECT count(*) FROM hit_queue") == 0)
        #expect(deliveredCount + dead + droppedCount == enqueuedCount)
        // A profile whose rows were all dropped keeps its count pending for its next batch.
        let pending = try store.testInteger("SELECT coalesce(sum(merged_pending), 0) FROM hit_merge_pending")
        #expect(mergedDelivered + deadMerged + pending == mergedReturned)
    }
}
