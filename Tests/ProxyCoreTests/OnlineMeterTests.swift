import Testing

@testable import ProxyCore

/// A tunnel's minute online (docs/services.md#minutes-online): more than 8 KiB in a minute
/// of the wall clock counts it, once; a connection that only keeps itself alive does not.
@Suite struct OnlineMeterTests {
    static let minute: Int64 = 1_764_504_000

    @Test func keepAlivesNeverCountAndAMinuteOfUseCountsOnce() {
        var meter = OnlineMeter()
        func note(_ total: UInt64, _ wallClock: Int64) -> Bool { meter.note(total: total, wallClock: wallClock).online }
        // A push channel: 200 bytes every 10 s for an hour.
        var total: UInt64 = 0
        var counted = 0
        for tick in 0..<360 {
            total += 200
            if note(total, Self.minute + Int64(tick) * 10) { counted += 1 }
        }
        #expect(counted == 0)
        // A page: 40 KB in one second, then more in the same minute: one minute, once.
        let start = Self.minute + 3_600
        #expect(note(total + 40_000, start))
        #expect(!note(total + 90_000, start + 1))
        // The next minute starts from nothing: 8 KiB exactly is not more than the threshold.
        let threshold = UInt64(8 * 1_024)
        #expect(!note(total + 90_000 + threshold, start + 60))
        #expect(note(total + 90_001 + threshold, start + 61))
    }

    @Test func bytesSpreadOverAMinuteAddUpAndAWallClockStepBackIsANewMinute() {
        var meter = OnlineMeter()
        func note(_ total: UInt64, _ wallClock: Int64) -> Bool { meter.note(total: total, wallClock: wallClock).online }
        var results: [Bool] = []
        for second in 0..<10 { results.append(note(UInt64(second + 1) * 1_000, Self.minute + Int64(second))) }
        #expect(results.firstIndex(of: true) == 8, "9,000 bytes pass 8 KiB at the ninth second: \(results)")
        // The clock stepped an hour back: another minute, its 10,000 bytes count it.
        #expect(note(20_000, Self.minute - 3_600 + 59))
    }

    /// Whether bytes moved since the last call, however late it comes: what a tick delayed
    /// past the relay's last activity still counts.
    @Test func bytesMovedSinceTheLastCallAreSaid() {
        var meter = OnlineMeter()
        #expect(meter.note(total: 100, wallClock: Self.minute) == (moved: true, online: false))
        #expect(meter.note(total: 100, wallClock: Self.minute + 5) == (moved: false, online: false))
        #expect(meter.note(total: 10_000, wallClock: Self.minute + 30) == (moved: true, online: true))
        #expect(meter.note(total: 10_100, wallClock: Self.minute + 31) == (moved: true, online: false))
    }
}
