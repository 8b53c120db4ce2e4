import CSystem
import EventLoop
import Glibc
import Locks
import SystemIO
import Testing

/// Long work on a background thread rests after each slice (`Pacer`), counted on a clock the
/// test moves, and only a thread in the idle class really gives its core away: counted by
/// the kernel's context switches of the thread, not timed.
@Suite struct PacerTests {
    /// A clock that moves `step` nanoseconds each time it is read.
    final class SteppingClock: @unchecked Sendable {
        var now: Int64 = 1_000_000_000
        var step: Int64
        init(step: Int64) { self.step = step }
        func read() -> Int64 {
            defer { now += step }
            return now
        }
    }

    @Test func continuousWorkRestsOncePerSlice() {
        // 10 µs of work between checkpoints: a 200 µs slice ends every twenty of them.
        let clock = SteppingClock(step: 10_000)
        var restsSeen = 0
        var pacer = Pacer(slice: 200_000, clock: clock.read, rest: { restsSeen += 1 })
        for _ in 0..<2_000 { pacer.checkpoint() }
        #expect(pacer.rests == restsSeen)
        // 2,000 checkpoints are 20 ms of work: about a hundred slices (a rest reads the clock
        // once more, so slightly fewer).
        #expect((90...100).contains(pacer.rests))
    }

    @Test func aPacerCanReadTheClockOnceInSoManyCalls() {
        let clock = SteppingClock(step: 10_000)
        var pacer = Pacer(slice: 200_000, callsPerRead: 16, clock: clock.read, rest: {})
        let readsAtStart = clock.now
        for _ in 0..<1_600 { pacer.checkpoint() }
        // 100 reads, plus one after each rest.
        let reads = Int((clock.now - readsAtStart) / 10_000)
        #expect(reads == 100 + pacer.rests)
        #expect(pacer.rests == 5)
    }

    @Test func aSliceIsCountedOnTheThreadThatRunsIt() throws {
        // Made on this thread, then used 10 ms later on another: the first checkpoint there
        // starts that thread's slice, it does not end this one's.
        let clock = SteppingClock(step: 10_000)
        let shared = Lock<Pacer>(Pacer(slice: 200_000, clock: clock.read, rest: {}))
        clock.now += 10_000_000
        try SystemThread.spawn(name: "pacer-other") {
            shared.withLock { $0.checkpoint() }
        }.join()
        #expect(shared.withLock { $0.rests } == 0)
    }

    /// The thread's involuntary context switches, as the kernel counts them (a yield that
    /// hands the core over is one).
    static func involuntarySwitches() -> Int {
        guard let bytes = try? Files.read("/proc/thread-self/status") else { return -1 }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        where line.hasPrefix("nonvoluntary_ctxt_switches:") {
            return Int(line.split(separator: "\t").last.map(String.init) ?? "") ?? -1
        }
        return -1
    }

    /// Two threads of one class on one core, each working 30 µs and resting in turn, 100
    /// times: in the idle class each rest hands the core to the other (which is waiting for
    /// it), so the switches are about one a rest; an ordinary thread's rest returns at once,
    /// and the two switch only when the scheduler's slice ends (3 ms of work each).
    /// Left out of the ThreadSanitizer run (`scripts/tsan` sets PHOSRA_TSAN): it counts the
    /// scheduler's switches, which the sanitizer's own threads and the other suites on the
    /// pinned core add to, and holds no shared state for the sanitizer to check.
    @Test(
        .disabled(if: getenv("PHOSRA_TSAN") != nil, "a scheduler count, not a race check"),
        arguments: [SystemThread.Priority.background, .normal])
    func aRestInTheIdleClassHandsTheCoreToAThreadWaitingForIt(priority: SystemThread.Priority) throws {
        let started = Lock(0)
        let switches = Lock<[Int]>([])
        let threads = try (0..<2).map { index in
            try SystemThread.spawn(name: "rest-\(index)", priority: priority) {
                guard cs_pin_thread_to_cpu(0) == 0 else { return switches.withLock { $0.append(-1) } }
                started.withLock { $0 += 1 }
                while started.withLock({ $0 }) < 2 { sched_yield() }
                let before = Self.involuntarySwitches()
                for _ in 0..<100 {
                    let end = Pacer.monotonicNanoseconds() + 30_000
                    while Pacer.monotonicNanoseconds() < end {}
                    Pacer.restInIdleClass()
                }
                let after = Self.involuntarySwitches()
                switches.withLock { $0.append(before < 0 || after < 0 ? -1 : after - before) }
            }
        }
        for thread in threads { thread.join() }
        let seen = switches.withLock { $0 }
        #expect(seen.count == 2 && !seen.contains(-1), "\(seen)")
        if priority == .background {
            #expect(seen.reduce(0, +) >= 100, "\(seen)")
        } else {
            #expect(seen.reduce(0, +) < 40, "\(seen)")
        }
    }
}
