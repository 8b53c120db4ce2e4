import EventLoop
import SystemIO
import TestSupport
import Testing

@testable import Commands
@testable import Gateway

/// `PHOSRA_GATE_TEST_CLOCK`, as Gateway.main reads it: the wall clock starts at the
/// instant given and moves with the monotonic clock; without it, the system's clocks.
@Suite(.blocking) struct TestClockTests {
    @Test func theWallClockStartsAtTheInstantAndMovesOn() throws {
        let clock = try CLI.makeClock(testClock: "2026-12-01T12:00:00Z")
        let first = clock.wall()
        #expect(first.unixSeconds >= 1_796_126_400 && first.unixSeconds <= 1_796_126_401, "\(first)")
        let start = clock.now()
        #expect(waitUntil { clock.now() - start >= 5_000_000 })
        let moved = clock.wall().unixNanoseconds - first.unixNanoseconds
        #expect(moved >= 5_000_000 && moved < 1_000_000_000, "with the monotonic clock: \(moved) ns")
        let offset = try CLI.makeClock(testClock: "2026-12-01T13:00:00+01:00").wall().unixSeconds
        #expect(offset >= 1_796_126_400 && offset <= 1_796_126_401, "the same instant with an offset")
    }

    @Test func withoutItTheSystemClock() throws {
        #expect(try CLI.makeClock(testClock: nil) is SystemClock)
        #expect(try CLI.makeClock(testClock: "") is SystemClock)
        #expect(throws: GatewayError.self) { try CLI.makeClock(testClock: "noon") }
    }
}
