import SystemIO
import TestSupport
import Testing

@testable import EventLoop

/// Timers on a running loop. Most use a `ManualClock`: the test moves time, which wakes the
/// loop, so nothing depends on the machine's speed.
@Suite struct EventLoopTimerTests {
    @Test func firesInDeadlineOrderOnTheLoopThread() throws {
        let clock = ManualClock(start: 1_000)
        try withLoops(clock: clock) { group in
            let loop = group.loops[0]
            let fired = Shared<[String]>([])
            try loop.sync {
                for (deadline, name) in [(5_000, "e"), (2_000, "b1"), (3_000, "c"), (2_000, "b2"), (4_000, "d")] {
                    loop.scheduleTimer(at: UInt64(deadline)) {
                        fired.update { $0.append(loop.inEventLoop ? name : "off-loop") }
                    }
                }
            }
            clock.set(3_500)
            #expect(waitUntil { fired.value.count == 3 })
            clock.set(10_000)
            #expect(waitUntil { fired.value.count == 5 })
            #expect(fired.value == ["b1", "b2", "c", "d", "e"])
        }
    }

    /// A step of the clock wakes a loop asleep until a timer a minute away: it fires
    /// without a minute of real time or a task to wake the loop.
    @Test func aStepOfTheClockWakesTheLoopForATimerAMinuteAway() throws {
        let clock = ManualClock()
        try withLoops(clock: clock) { group in
            let loop = group.loops[0]
            let fired = Shared<[UInt64]>([])
            try loop.sync {
                loop.scheduleTimer(after: 60_000_000_000) { fired.update { $0.append(clock.now()) } }
            }
            clock.advance(by: 59_000_000_000)
            clock.advance(by: 1_000_000_000)
            #expect(waitUntil(timeout: 5_000_000_000) { !fired.value.isEmpty }, "woken by the step")
            #expect(fired.value == [60_000_000_000])
        }
    }

    @Test func cancelledTimersNeverFire() throws {
        let clock = ManualClock()
        try withLoops(clock: clock) { group in
            let loop = group.loops[0]
            let fired = Shared<[Int]>([])
            let results = try loop.sync { () -> [Bool] in
                let keep = loop.scheduleTimer(at: 10) { fired.update { $0.append(1) } }
                let drop = loop.scheduleTimer(at: 20) { fired.update { $0.append(2) } }
                loop.scheduleTimer(at: 30) { fired.update { $0.append(3) } }
                return [loop.cancelTimer(drop), loop.cancelTimer(drop), keep == drop, loop.pendingTimerCount == 2]
            }
            #expect(results == [true, false, false, true])
            clock.set(100)
            #expect(waitUntil { fired.value.count == 2 })
            #expect(fired.value == [1, 3])
            #expect(try loop.sync { loop.pendingTimerCount } == 0)
        }
    }

    @Test func timerScheduledFromATimer() throws {
        let clock = ManualClock()
        try withLoops(clock: clock) { group in
            let loop = group.loops[0]
            let fired = Shared<[String]>([])
            try loop.sync {
                loop.scheduleTimer(at: 10) {
                    fired.update { $0.append("outer") }
                    // Already due: runs on the next iteration, without another step.
                    loop.scheduleTimer(at: loop.clock.now()) { fired.update { $0.append("inner-now") } }
                    loop.scheduleTimer(at: 1_000) { fired.update { $0.append("inner-later") } }
                }
            }
            clock.set(10)
            #expect(waitUntil { fired.value.count == 2 })
            #expect(fired.value == ["outer", "inner-now"])
            clock.set(1_000)
            #expect(waitUntil { fired.value.count == 3 })
            #expect(fired.value.last == "inner-later")
        }
    }

    @Test func tenThousandTimersFireInDeadlineOrder() throws {
        let clock = ManualClock()
        try withLoops(clock: clock) { group in
            let loop = group.loops[0]
            let fired = Shared<[UInt64]>([])
            try loop.sync {
                var generator = SplitMix(seed: 7)
                for _ in 0..<10_000 {
                    let deadline = 1 + generator.next() % 1_000_000
                    loop.scheduleTimer(at: deadline) { fired.update { $0.append(deadline) } }
                }
            }
            clock.set(500_000)
            #expect(waitUntil { fired.value.count > 4_000 && fired.value.last! <= 500_000 })
            clock.set(2_000_000)
            #expect(waitUntil { fired.value.count == 10_000 })
            let deadlines = fired.value
            #expect(zip(deadlines, deadlines.dropFirst()).allSatisfy { $0 <= $1 })
        }
    }

    @Test func targetTimersCarryTheirTag() throws {
        final class Target: TimerTarget, @unchecked Sendable {  // loop-confined; read after the loop is idle
            var tags: [UInt64] = []
            func timerFired(tag: UInt64) { tags.append(tag) }
        }
        let clock = ManualClock()
        try withLoops(clock: clock) { group in
            let loop = group.loops[0]
            let target = Target()
            try loop.sync {
                loop.scheduleTimer(at: 2, target: target, tag: 22)
                let cancelled = loop.scheduleTimer(at: 1, target: target, tag: 11)
                loop.scheduleTimer(at: 3, target: target, tag: 33)
                loop.cancelTimer(cancelled)
            }
            clock.set(5)
            #expect(waitUntil { (try? loop.sync { target.tags.count }) == 2 })
            #expect(try loop.sync { target.tags } == [22, 33])
        }
    }

    /// The epoll timeout is derived from the earliest pending timer.
    @Test func pollTimeoutFollowsTheEarliestTimer() throws {
        let clock = ManualClock(start: 1_000_000_000)
        let loop = try EventLoop(clock: clock)  // not running: the test thread owns it
        let now = clock.now()
        #expect(loop.pollTimeout(now: now) == -1)
        loop.scheduleTimer(at: now + 5_500_000) {}
        #expect(loop.pollTimeout(now: now) == 6)  // rounded up: never wake before the deadline
        let early = loop.scheduleTimer(at: now + 1_000_000) {}
        #expect(loop.pollTimeout(now: now) == 1)
        loop.cancelTimer(early)
        #expect(loop.pollTimeout(now: now) == 6)
        #expect(loop.pollTimeout(now: now + 5_500_000) == 0)
        #expect(loop.pollTimeout(now: now + 9_000_000) == 0)
        loop.scheduleTimer(at: .max) {}
        #expect(loop.pollTimeout(now: now + 9_000_000) == 0)
        #expect(loop.pendingTimerCount == 2)
    }

    /// An idle loop with nothing but a timer wakes up for it, on the real clock.
    @Test func idleLoopWakesForItsTimer() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let firedAt = Shared<Nanoseconds?>(nil)
            let scheduledAt = try loop.sync { () -> Nanoseconds in
                let start = loop.clock.now()
                loop.scheduleTimer(after: 30_000_000) { firedAt.update { $0 = loop.clock.now() } }
                loop.scheduleTimer(after: 60_000_000_000) {}
                return start
            }
            #expect(waitUntil(timeout: 5_000_000_000) { firedAt.value != nil })
            let elapsed = (firedAt.value ?? .max) &- scheduledAt
            #expect(elapsed >= 30_000_000 && elapsed < 2_000_000_000)
        }
    }
}
