import EventLoop
import Glibc
import Locks
import SystemIO
import Testing

/// Long work on a background thread rests after each slice (`Pacer`), counted on a clock the
/// test moves, and only a thread in the idle class really sleeps: counted by the kernel's
/// voluntary context switches of the thread, not timed.
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

    /// The thread's voluntary context switches, as the kernel counts them.
    static func voluntarySwitches() -> Int {
        guard let bytes = try? Files.read("/proc/thread-self/status") else { return -1 }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        where line.hasPrefix("voluntary_ctxt_switches:") {
            return Int(line.split(separator: "\t").last.map(String.init) ?? "") ?? -1
        }
        return -1
    }

    @Test func onlyAThreadInTheIdleClassSleepsWhenItRests() throws {
        let switches = Lock<[String: Int]>([:])
        for (name, priority) in [("rest-bg", SystemThread.Priority.background), ("rest-fg", .normal)] {
            try SystemThread.spawn(name: name, priority: priority) {
                let before = Self.voluntarySwitches()
                for _ in 0..<20 { Pacer.restInIdleClass() }
                let after = Self.voluntarySwitches()
                switches.withLock { $0[name] = before < 0 || after < 0 ? -1 : after - before }
            }.join()
        }
        let seen = switches.withLock { $0 }
        // Each sleep gives the core up once; an ordinary thread makes a system call and
        // goes on (reading /proc may rarely block, hence not exactly zero).
        #expect(try #require(seen["rest-bg"]) >= 20)
        #expect((0..<5).contains(try #require(seen["rest-fg"])))
    }
}
