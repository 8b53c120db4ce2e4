import TestSupport
import Testing

@testable import Sync

@Suite(.blocking) struct SyncScheduleTests {
    static var timing: SyncSchedule.Timing {
        var timing = SyncSchedule.Timing()
        timing.pollInterval = 10_000
        timing.fullSyncInterval = 60_000
        timing.revokeAfter = 30_000
        timing.backoffMax = 8_000
        return timing
    }

    @Test func startsWithAFullFetchThenPollsWithJitter() {
        var schedule = SyncSchedule(timing: Self.timing, now: 0)
        #expect(schedule.next().request == .full && schedule.next().at == 0)
        schedule.record(.applied, for: .full, now: 0, random: 0.5)
        #expect(schedule.next() == (.poll, 10_000))
        schedule.record(.notModified, for: .poll, now: 10_000, random: 0)
        #expect(schedule.next().at == 19_000, "−10 %")
        schedule.record(.notModified, for: .poll, now: 19_000, random: 0.999)
        #expect(schedule.next().at >= 29_900 && schedule.next().at <= 30_000, "+10 %")
        var now: Int64 = 30_000
        while schedule.next().request == .poll {
            now = schedule.next().at
            schedule.record(.notModified, for: .poll, now: now, random: 0.5)
        }
        #expect(schedule.next().at == 60_000, "the periodic full fetch")
    }

    @Test func failuresBackOffExponentiallyUpToTheMaximum() {
        var schedule = SyncSchedule(timing: Self.timing, now: 0)
        var delays: [Int64] = []
        var now: Int64 = 0
        for _ in 0..<6 {
            schedule.record(.failed, for: .full, now: now, random: 1)
            delays.append(schedule.next().at - now)
            now = schedule.next().at
        }
        #expect(delays == [2000, 4000, 8000, 8000, 8000, 8000])
        schedule.record(.applied, for: .full, now: now, random: 0.5)
        #expect(schedule.failures == 0 && schedule.holdUntil == 0)
    }

    @Test func retryAfterIsHonoured() {
        var schedule = SyncSchedule(timing: Self.timing, now: 0)
        schedule.record(.rateLimited(retryAfterSeconds: 60), for: .full, now: 1000, random: 0)
        #expect(schedule.next().at == 61_000)
    }

    @Test func revokedOnlyAfter401sForRevokeAfter() {
        var schedule = SyncSchedule(timing: Self.timing, now: 0)
        schedule.record(.unauthorized, for: .full, now: 1000, random: 0)
        #expect(!schedule.isRevoked(now: 30_999))
        schedule.record(.unauthorized, for: .full, now: 20_000, random: 0)
        #expect(schedule.unauthorizedSince == 1000)
        #expect(schedule.isRevoked(now: 31_000))
        schedule.record(.notModified, for: .poll, now: 40_000, random: 0)
        #expect(!schedule.isRevoked(now: 100_000), "an answer ends the run of 401s")
    }

    @Test func theRequestBudgetKeepsUnderTwentyAMinute() {
        var budget = RequestBudget()
        for second in 0..<20 { budget.spend(Int64(second) * 1000) }
        #expect(budget.availableAt(20_000) == 60_000)
        budget.spend(60_000)
        #expect(budget.availableAt(60_000) == 61_000)
    }
}
