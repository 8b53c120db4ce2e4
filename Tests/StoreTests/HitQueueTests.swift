import SystemIO
import TestSupport
import Testing

@testable import Store

@Suite(.blocking) struct HitQueueTests {
    @Test func identicalKeysAreUpsertedNotInserted() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        try store.enqueue(
            [
                hit(count: 2, matched: "old", category: "social", at: 100, until: 110, policyVersion: 1),
                hit(count: 3, matched: "new", category: "adult", at: 120, until: 130, policyVersion: 2),
            ],
            maxRows: 100)
        // Older than what is queued: counted, widens the span, but does not replace the detail.
        try store.enqueue(
            [hit(count: 4, matched: "older", category: "x", at: 90, until: 95, policyVersion: 1)], maxRows: 100)
        // Differs in client, source, reason or profile: separate rows.
        try store.enqueue(
            [
                hit(client: "192.168.1.21"), hit(source: "proxy"), hit(reason: "downtime"),
                hit(profile: "bob"),
            ], maxRows: 100)
        #expect(try store.queueCounts(profile: "alice").queued == 4)
        let batch = try #require(try store.nextBatch(profile: "alice", now: testNow))
        let merged = try #require(batch.events.first { $0.count > 1 })
        #expect(merged == hit(count: 9, matched: "new", category: "adult", at: 90, until: 130, policyVersion: 2))
    }

    @Test func batchesHoldAtMost500EventsOldestFirst() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let rows = (0..<1234).map { hit("site\($0).example", at: testNow + Int64($0)) }
        try store.enqueue(rows.shuffled(), maxRows: 100_000)
        var delivered: [HitRow] = []
        var sizes: [Int] = []
        while let batch = try store.nextBatch(profile: "alice", now: testNow) {
            sizes.append(batch.events.count)
            #expect(batch.windowStart == batch.events.first?.firstSeen)
            #expect(batch.windowEnd == batch.events.map(\.lastSeen).max())
            delivered += batch.events
            #expect(try store.completeBatch(id: batch.id) == batch.events.count)
        }
        #expect(sizes == [500, 500, 234])
        #expect(delivered == rows)
        #expect(try store.queueCounts(profile: "alice") == (queued: 0, batched: 0, deadLettered: 0, mergedPending: 0))
        #expect(try store.testInteger("SELECT count(*) FROM hit_batches") == 0)
    }

    @Test func batchesStayUnder256KiBOfReportJSON() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let label = String(repeating: "a", count: 60)
        let long = "\(label).\(label).\(label).example"
        let rows = (0..<1000).map { index in
            hit(
                "\(index).\(long)", reason: "blocked_domain:\(index).\(long)", matched: "\(index).\(long)",
                category: "quote\"back\\slash\u{1}", at: testNow + Int64(index))
        }
        try store.enqueue(rows, maxRows: 100_000)
        var sizes: [Int] = []
        var total = 0
        while let batch = try store.nextBatch(profile: "alice", now: testNow) {
            #expect(batch.events.count < 500)
            sizes.append(TestReportJSON.report(batch).utf8.count)
            total += batch.events.count
            try store.completeBatch(id: batch.id)
        }
        #expect(total == 1000)
        #expect(sizes.count > 2)
        #expect(sizes.allSatisfy { $0 <= 262_144 })
        #expect(sizes.dropLast().allSatisfy { $0 > 250_000 })  // and not cut absurdly early
    }

    @Test func estimatedSizeIsAnUpperBoundOfTheRealJSON() {
        let awkward = ["", "plain", "quo\"te", "back\\slash", "tab\tnew\nline", "\u{0}\u{1f}", "Bücher.de ✓", "🎮"]
        for text in awkward {
            for row in [
                hit(text, reason: text, client: text, source: text, count: 123_456, matched: text, category: text),
                hit(text, matched: nil, category: nil),
            ] {
                #expect(TestReportJSON.event(row).utf8.count + 1 <= row.estimatedJSONBytes)
            }
        }
    }

    @Test func oneOversizedEventStillMakesABatch() throws {
        let fixture = try StoreFixture()
        try fixture.store.enqueue([hit(String(repeating: "x", count: 5000))], maxRows: 10)
        let batch = try fixture.store.nextBatch(profile: "alice", maxBytes: 1000, now: testNow)
        #expect(batch?.events.count == 1)
    }

    @Test func theSameBatchIsReturnedUntilCompletedEvenAcrossACrash() throws {
        let fixture = try StoreFixture()
        try fixture.store.enqueue((0..<10).map { hit("s\($0).example") }, maxRows: 100)
        // Past the bound of 13: the four oldest (one name) merge into one row.
        try fixture.store.enqueue(
            (0..<4).map { hit("m.example", client: "10.0.0.\($0)", at: testNow - 100) }, maxRows: 13)
        let first = try #require(try fixture.store.nextBatch(profile: "alice", maxEvents: 4, now: testNow))
        #expect(first.events.count == 4)
        #expect(first.mergedEvents == 3)
        #expect(first.events.map(\.client) == ["*", "192.168.1.20", "192.168.1.20", "192.168.1.20"])
        #expect(try fixture.store.nextBatch(profile: "alice", now: testNow + 60) == first)
        // Rows queued now, even with a batched row's key, wait for the next batch.
        try fixture.store.enqueue([hit("s1.example", count: 5), hit("late.example")], maxRows: 100)
        #expect(try fixture.store.nextBatch(profile: "alice", now: testNow + 61) == first)
        // A crash: closed without completing. The reopened store resends the same batch.
        fixture.store.close()
        let again = try fixture.reopen()
        #expect(try again.nextBatch(profile: "alice", now: testNow + 120) == first)
        #expect(try again.queueCounts(profile: "alice") == (queued: 9, batched: 4, deadLettered: 0, mergedPending: 0))
        try again.completeBatch(id: first.id)
        #expect(try again.completeBatch(id: first.id) == 0)  // a second 202 for the same batch
        let second = try #require(try again.nextBatch(profile: "alice", now: testNow + 130))
        #expect(second.id != first.id)
        #expect(second.mergedEvents == 0)
        #expect(second.events.count == 9)
        #expect(second.events.contains(hit("s1.example", count: 5)))
        #expect(second.events.contains(hit("late.example")))
    }

    @Test func batchIDsAreRandomVersion4UUIDs() throws {
        let fixture = try StoreFixture()
        var seen: Set<String> = []
        for index in 0..<50 {
            try fixture.store.enqueue([hit("s\(index).example")], maxRows: 100)
            let batch = try #require(try fixture.store.nextBatch(profile: "alice", now: testNow))
            let parts = batch.id.split(separator: "-").map(\.count)
            #expect(parts == [8, 4, 4, 4, 12])
            #expect(batch.id.allSatisfy { "0123456789abcdef-".contains($0) })
            #expect(Array(batch.id)[14] == "4")
            #expect("89ab".contains(Array(batch.id)[19]))
            seen.insert(batch.id)
            try fixture.store.completeBatch(id: batch.id)
        }
        #expect(seen.count == 50)
    }

    @Test func aRefusedBatchMovesToTheDeadLetterTable() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        try store.enqueue((0..<5).map { hit("s\($0).example") } + [hit(profile: "bob")], maxRows: 100)
        let batch = try #require(try store.nextBatch(profile: "alice", maxEvents: 3, now: testNow))
        #expect(
            try store.deadLetter(batchID: batch.id, reason: "HTTP 400: events[0].domain invalid", now: testNow + 5) == 3
        )
        #expect(try store.deadLetter(batchID: batch.id, reason: "again", now: testNow + 6) == 0)
        #expect(try store.queueCounts(profile: "alice") == (queued: 2, batched: 0, deadLettered: 3, mergedPending: 0))
        #expect(try store.queueCounts(profile: "bob") == (queued: 1, batched: 0, deadLettered: 0, mergedPending: 0))
        let stored = try store.testRows("SELECT error, dead_at FROM dead_letter_batches") {
            "\($0.text(0))@\($0.int64(1))"
        }
        #expect(stored == ["HTTP 400: events[0].domain invalid@\(testNow + 5)"])
        let next = try #require(try store.nextBatch(profile: "alice", now: testNow))
        #expect(next.events.count == 2)
        #expect(next.id != batch.id)
        #expect(try store.pruneDeadLetter(before: testNow + 6) == 3)
        #expect(try store.queueCounts(profile: "alice").deadLettered == 0)
    }

    @Test func profilesHaveIndependentBatches() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        try store.enqueue([hit(profile: "alice"), hit(profile: "bob"), hit("x.example", profile: "bob")], maxRows: 100)
        #expect(try store.profilesWithQueuedHits() == ["alice", "bob"])
        let alice = try #require(try store.nextBatch(profile: "alice", now: testNow))
        let bob = try #require(try store.nextBatch(profile: "bob", now: testNow))
        #expect(alice.events.map(\.profile) == ["alice"])
        #expect(bob.events.count == 2)
        try store.completeBatch(id: bob.id)
        #expect(try store.nextBatch(profile: "bob", now: testNow) == nil)
        #expect(try store.nextBatch(profile: "carol", now: testNow) == nil)
        #expect(try store.profilesWithQueuedHits() == ["alice"])
    }

    @Test func aBatchNeverMixesPolicyVersions() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        try store.enqueue(
            [
                hit("a.example", at: 1, policyVersion: 3), hit("b.example", at: 2, policyVersion: 4),
                hit("c.example", at: 3, policyVersion: 3),
            ], maxRows: 100)
        let first = try #require(try store.nextBatch(profile: "alice", now: testNow))
        #expect(first.policyVersion == 3)
        #expect(first.events.map(\.domain) == ["a.example", "c.example"])
        try store.completeBatch(id: first.id)
        let second = try #require(try store.nextBatch(profile: "alice", now: testNow))
        #expect(second.policyVersion == 4)
        #expect(second.events.map(\.domain) == ["b.example"])
    }
}

/// The `blocked_attempt` report as the reporter will write it, to check size estimates
/// against real JSON.
enum TestReportJSON {
    static func string(_ text: String?) -> String {
        text.map(Logger.json) ?? "null"
    }

    static let timestamp = "\"2026-03-01T00:00:00Z\""

    static func event(_ row: HitRow) -> String {
        "{\"domain\":\(string(row.domain)),\"matched\":\(string(row.matched)),\"reason\":\(string(row.reason)),"
            + "\"category\":\(string(row.category)),\"client\":\(string(row.client)),\"source\":\(string(row.source)),"
            + "\"count\":\(row.count),\"first_seen\":\(timestamp),\"last_seen\":\(timestamp)}"
    }

    static func report(_ batch: Batch) -> String {
        "{\"report_type\":\"blocked_attempt\",\"reported_at\":\(timestamp),\"payload\":{\"batch_id\":\(string(batch.id)),"
            + "\"policy_version\":\(batch.policyVersion),\"window_start\":\(timestamp),\"window_end\":\(timestamp),"
            + "\"events\":[\(batch.events.map(event).joined(separator: ","))],\"merged_events\":\(batch.mergedEvents)}}"
    }
}
