import TestSupport
import Testing

@testable import Store

@Suite(.blocking) struct ActivityTests {
    @Test func countsAccumulatePerProfileAndHour() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let hour: Int64 = 1_772_323_200
        try store.addActivity(
            profile: "alice", hourStart: hour, queries: 100, blocksByReason: ["category": 3],
            blocksByCategory: ["adult": 3], rewritesByEngine: ["google": 1])
        try store.addActivity(
            profile: "alice", hourStart: hour, queries: 50, blocksByReason: ["category": 1, "downtime": 7],
            blocksByCategory: ["gaming": 1], rewritesByEngine: ["google": 2, "youtube": 4])
        try store.addActivity(profile: "alice", hourStart: hour + 3600, queries: 9)
        try store.addActivity(profile: "alice", hourStart: hour - 3600, queries: 1)
        try store.addActivity(profile: "bob", hourStart: hour, queries: 5)
        let unsent = try store.unsentActivity(profile: "alice", before: hour + 3600)
        #expect(
            unsent == [
                ActivityRecord(
                    profile: "alice", hourStart: hour - 3600, queries: 1, blocksByReason: [:],
                    blocksByCategory: [:], rewritesByEngine: [:]),
                ActivityRecord(
                    profile: "alice", hourStart: hour, queries: 150, blocksByReason: ["category": 4, "downtime": 7],
                    blocksByCategory: ["adult": 3, "gaming": 1], rewritesByEngine: ["google": 3, "youtube": 4]),
            ])
        try store.markActivitySent(profile: "alice", hourStart: hour - 3600)
        #expect(try store.unsentActivity(profile: "alice", before: hour + 3600).map(\.hourStart) == [hour])
        #expect(
            try store.unsentActivity(profile: "alice", before: hour + 7200).map(\.hourStart) == [hour, hour + 3600])
        #expect(try store.unsentActivity(profile: "bob", before: hour + 3600).map(\.queries) == [5])
        // A late add to a sent hour is kept but not sent again.
        try store.addActivity(profile: "alice", hourStart: hour - 3600, queries: 1)
        #expect(try store.unsentActivity(profile: "alice", before: hour).isEmpty)
        #expect(try store.pruneActivity(before: hour + 3600) == 3)
        #expect(try store.testInteger("SELECT count(*) FROM activity_counts") == 0)
        #expect(try store.unsentActivity(profile: "alice", before: hour + 7200).map(\.hourStart) == [hour + 3600])
    }
}
