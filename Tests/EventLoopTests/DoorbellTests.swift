import SystemIO
import TestSupport
import Testing

/// A thread waiting on a `Doorbell` with a timeout on a `ManualClock` (the sync, the
/// notifier and the daemon's control thread wait so): the clock's time is the timeout's,
/// and a step wakes the wait to look at it again.
@Suite(.blocking) struct DoorbellTests {
    /// Waits on its own thread; `result` is nil until `wait` returned.
    final class Waiter: Sendable {
        let doorbell: Doorbell
        let result = Shared<String?>(nil)
        private let thread: SystemThread

        init(timeout: Nanoseconds, clock: ManualClock) throws {
            let doorbell = try Doorbell()
            let result = self.result
            self.doorbell = doorbell
            thread = try SystemThread.spawn(name: "doorbell-test") {
                let outcome: String
                do { outcome = try doorbell.wait(timeout: timeout, clock: clock) ? "rung" : "timed out" } catch {
                    outcome = "\(error)"
                }
                result.update { $0 = outcome }
            }
        }

        /// Rung first, so a wait the test did not end still returns.
        func join() {
            doorbell.ring()
            thread.join()
        }
    }

    /// Whether the waiter has taken in every step so far and is still waiting: a waiter
    /// that returned stops watching the clock.
    static func stillWaiting(_ waiter: Waiter, _ clock: ManualClock) -> Bool {
        // A step nobody should act on: the waiter wakes, looks, and waits again.
        clock.advance(by: 0)
        return waitUntil { !clock.stepsPending } && clock.watcherCount == 1 && waiter.result.value == nil
    }

    @Test func aWaitEndsWhenTheClockPassesItsTimeoutNotBefore() throws {
        let clock = ManualClock()
        let waiter = try Waiter(timeout: 3_600_000_000_000, clock: clock)
        defer { waiter.join() }
        #expect(waitUntil { clock.watcherCount == 1 }, "the thread waits")
        // An hour on the clock, in steps: a real hour's wait would fail the test's bound.
        clock.advance(by: 1_800_000_000_000)
        #expect(Self.stillWaiting(waiter, clock), "half an hour is short of the timeout")
        clock.advance(by: 1_800_000_000_000)
        #expect(waitUntil(timeout: 5_000_000_000) { waiter.result.value != nil }, "woken by the step")
        #expect(waiter.result.value == "timed out")
    }

    @Test func aStepShortOfTheTimeoutLeavesTheWaitToARing() throws {
        let clock = ManualClock()
        let waiter = try Waiter(timeout: 60_000_000_000, clock: clock)
        defer { waiter.join() }
        #expect(waitUntil { clock.watcherCount == 1 }, "the thread waits")
        clock.advance(by: 59_000_000_000)
        clock.stepWall(by: 86_400_000_000_000)
        #expect(Self.stillWaiting(waiter, clock), "59 s and a day's wall step are short of a minute")
        waiter.doorbell.ring()
        #expect(waitUntil(timeout: 5_000_000_000) { waiter.result.value != nil })
        #expect(waiter.result.value == "rung")
    }

    /// Past its deadline a wait returns, however often the clock moves meanwhile.
    @Test func aClockThatKeepsMovingDoesNotHoldOffATimeout() throws {
        let clock = ManualClock()
        let waiter = try Waiter(timeout: 1_000_000_000, clock: clock)
        defer { waiter.join() }
        #expect(waitUntil { clock.watcherCount == 1 }, "the thread waits")
        #expect(
            waitUntil(timeout: 5_000_000_000) {
                clock.advance(by: 1_000_000_000)
                return waiter.result.value != nil
            })
        #expect(waiter.result.value == "timed out")
    }

    @Test func theSystemClockWatchesNoSteps() {
        #expect(SystemClock().watchSteps() == nil)
    }
}
