import EventLoop
import Locks
import SystemIO
import Testing

/// State guarded by a lock without being its value, like a task handed through a loop's queue.
private final class Tally: @unchecked Sendable {
    // Sendable: `seen` is read and written only inside `lock.withLock`.
    let lock = Lock(0)
    var seen: [Int] = []
}

private struct Refused: Error {}

@Suite struct LockTests {
    /// Four threads take turns on one lock with tiny critical sections, so it is contended and
    /// handed over by the kernel. Counts are exact in any build; under scripts/tsan a hand-over
    /// TSan did not see would be reported as a race on `seen` (as it is with a plain `Mutex`, or
    /// in a TSan build without PHOSRA_TSAN).
    @Test func contendedHoldersSeeEachOthersWrites() throws {
        let tally = Tally()
        let threads = 4
        let rounds = 20_000
        let running = try (0..<threads).map { thread in
            try SystemThread.spawn(name: "lock-\(thread)") {
                for round in 0..<rounds {
                    tally.lock.withLock { count in
                        count += 1
                        tally.seen.append(thread * rounds + round)
                    }
                }
            }
        }
        for thread in running { thread.join() }
        let (count, seen) = tally.lock.withLock { ($0, tally.seen) }
        #expect(count == threads * rounds)
        #expect(seen.count == threads * rounds)
        #expect(Set(seen).count == threads * rounds)
    }

    @Test func aThrowingBodyLeavesTheLockFreeAndTheValueAsLeft() {
        let lock = Lock([1])
        #expect(throws: Refused.self) {
            try lock.withLock { (values: inout [Int]) throws(Refused) in
                values.append(2)
                throw Refused()
            }
        }
        #expect(lock.withLock { $0 } == [1, 2])
    }
}
