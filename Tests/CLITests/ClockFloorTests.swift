import EventLoop
import Foundation
import SystemIO
import TestSupport
import Testing

@testable import Commands
@testable import Gateway

/// The clock of a board without a real-time clock (docs/operations.md#a-clock-without-rtc),
/// on a `ManualClock`: started behind the persisted floor, the wall clock reads as the
/// floor plus the time since the start, and certificate validity goes unchecked, until
/// the real clock passes the floor.
@Suite(.blocking) struct ClockFloorTests {
    static let second: Int64 = 1_000_000_000
    static let floorTime = WallTime(unixSeconds: 1_796_040_000)  // 2026-11-30 12:00 UTC

    @Test func behindTheFloorTheWallClockStartsThereUntilTheRealOnePassesIt() throws {
        let scratch = try ScratchDirectory("pg-floor")
        FlooredClock.write(scratch.path, Self.floorTime)
        // Booted in 1970.
        let base = ManualClock(start: 5_000_000_000, wall: WallTime(unixSeconds: 0))
        let clock = FlooredClock(base: base, stateDirectory: scratch.path, kernelKnows: false)
        #expect(clock.floor == Self.floorTime)
        #expect(clock.wall() == Self.floorTime)
        #expect(clock.unsynchronised)
        base.advance(by: 90_000_000_000)
        #expect(clock.wall() == Self.floorTime.advanced(by: 90 * Self.second), "the floor advances with time")
        // NTP sets the clock: from then on the real one, and certificates are checked in full.
        base.stepWall(by: Self.floorTime.unixNanoseconds + 3600 * Self.second)
        #expect(clock.wall() == base.wall())
        #expect(!clock.unsynchronised)
    }

    @Test func aClockAheadOfTheFloorIsTrustedAndTheFloorNeverGoesBack() throws {
        let scratch = try ScratchDirectory("pg-floor")
        FlooredClock.write(scratch.path, Self.floorTime)
        let base = ManualClock(start: 0, wall: Self.floorTime.advanced(by: 60 * Self.second))
        let clock = FlooredClock(base: base, stateDirectory: scratch.path, kernelKnows: false)
        #expect(clock.floor == nil)
        #expect(clock.wall() == base.wall())
        #expect(!clock.unsynchronised)
        FlooredClock.write(scratch.path, WallTime(unixSeconds: 0))
        #expect(FlooredClock.read(scratch.path) == Self.floorTime, "a clock stepped back never lowers the floor")
        // No file, or garbage in it: no floor.
        try scratch.write(FlooredClock.fileName, "not a number\n")
        #expect(FlooredClock.read(scratch.path) == nil)
    }
}
