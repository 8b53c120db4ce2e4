import EventLoop
import Locks
import Synchronization
import SystemIO
import TestSupport
import Testing

/// What a loop thread reports of itself and whom it yields to: the length of each turn
/// (measured on the loop's clock, so a manual clock makes it exact) and the scheduling
/// class of the threads beside it.
@Suite struct LoopThreadTests {
    @Test func eachTurnIsMeasuredOnTheLoopsClockAndTheLongestIsKept() throws {
        let clock = ManualClock()
        let group = try EventLoopGroup(loopCount: 1, name: "turn-test", clock: clock)
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let before = loop.turns.snapshot.count
        // A task that "takes" 3 ms: the clock moves while the turn runs.
        try loop.runSync { clock.advance(by: 3_000_000) }
        // The turn is recorded after its tasks: wait for the record, not for the task.
        #expect(waitUntil { loop.longestTurn.load(ordering: .relaxed) == 3_000_000 })
        try loop.runSync {}
        #expect(waitUntil { loop.turns.snapshot.count - before >= 2 })
        let after = loop.turns.snapshot
        // The 3 ms turn is above the 2 ms bound and within the 5 ms one.
        let twoMs = try #require(EventLoop.turnBounds.firstIndex(of: 0.002))
        #expect(after.cumulative[twoMs] == after.count - 1)
        #expect(after.cumulative[twoMs + 1] == after.count)
    }

    @Test func backgroundThreadsYieldToLoopsAndLoopsRunAsNormal() throws {
        let seen = Lock<[String: SystemThread.Priority]>([:])
        for (name, priority) in [("bg-test", SystemThread.Priority.background), ("fg-test", .normal)] {
            try SystemThread.spawn(name: name, priority: priority) {
                seen.withLock { $0[name] = SystemThread.currentPriority }
            }.join()
        }
        let group = try EventLoopGroup(loopCount: 1, name: "prio-test", clock: SystemClock())
        defer { group.shutdownGracefully() }
        let onLoop = try group.loops[0].runSync(timeout: 5_000_000_000) { SystemThread.currentPriority }
        #expect(seen.withLock { $0 } == ["bg-test": .background, "fg-test": .normal])
        #expect(onLoop == .normal)
    }
}
