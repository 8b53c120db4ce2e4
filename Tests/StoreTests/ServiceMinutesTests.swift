import TestSupport
import Testing

@testable import Store

/// App minutes in the store (docs/services.md#budgets): merged as sets, so a minute saved
/// before a restart is never counted twice; served days for the daily report; the budgets
/// `status` shows.
@Suite(.blocking) struct ServiceMinutesTests {
    /// A bit set's bytes with `bits` set (192 bytes, as `MinuteSet` writes them).
    static func bits(_ bits: [Int]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 192)
        for bit in bits { bytes[bit / 8] |= 1 << UInt8(bit % 8) }
        return bytes
    }

    static func or(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] { zip(a, b).map { $0 | $1 } }

    @Test func minutesMergeAsSetsAndDaysAreReportedOnce() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        try store.saveServiceMinutes(
            [
                ServiceMinutesRow(profile: "alice", day: 100, service: "tiktok", minutes: Self.bits([1, 2])),
                ServiceMinutesRow(profile: "bob", day: 100, service: "tiktok", minutes: Self.bits([9])),
            ], served: [("alice", 100), ("bob", 100)], budgets: nil, merge: Self.or)
        try store.saveServiceMinutes(
            [ServiceMinutesRow(profile: "alice", day: 100, service: "tiktok", minutes: Self.bits([2, 3]))],
            served: [("alice", 100), ("alice", 101)], budgets: nil, merge: Self.or)
        let alice = try store.serviceMinutes(day: 100, profile: "alice")
        #expect(
            alice == [ServiceMinutesRow(profile: "alice", day: 100, service: "tiktok", minutes: Self.bits([1, 2, 3]))])
        #expect(try store.serviceMinutes(day: 100).count == 2)
        #expect(try store.unsentScreenTimeDays(profile: "alice", before: 101) == [100])
        #expect(try store.unsentScreenTimeDays(profile: "alice", before: 102) == [100, 101])
        try store.markScreenTimeSent(profile: "alice", day: 100)
        #expect(try store.unsentScreenTimeDays(profile: "alice", before: 102) == [101])
        #expect(try store.unsentScreenTimeDays(profile: "bob", before: 101) == [100])
        #expect(try store.pruneServiceMinutes(before: 101) == 4)
        #expect(try store.serviceMinutes(day: 100).isEmpty)
        #expect(try store.unsentScreenTimeDays(profile: "alice", before: 102) == [101])
    }

    @Test func budgetsAreReplacedWholeAndSurviveAReopen() throws {
        let fixture = try StoreFixture()
        let first = [
            BudgetStatusRow(profile: "alice", service: "tiktok", day: 100, dailyMinutes: 60, used: 12),
            BudgetStatusRow(profile: "alice", service: "youtube", day: 100, dailyMinutes: 30, used: 0),
        ]
        try fixture.store.saveServiceMinutes([], served: [], budgets: first, merge: Self.or)
        #expect(try fixture.store.budgetStatus() == first)
        let second = [BudgetStatusRow(profile: "alice", service: "tiktok", day: 100, dailyMinutes: 60, used: 13)]
        try fixture.store.saveServiceMinutes([], served: [], budgets: second, merge: Self.or)
        try fixture.store.saveServiceMinutes([], served: [], budgets: nil, merge: Self.or)
        fixture.store.close()
        let reopened = try fixture.reopen()
        #expect(try reopened.budgetStatus() == second)
    }
}
