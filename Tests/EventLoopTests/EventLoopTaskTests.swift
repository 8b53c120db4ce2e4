import EventLoop
import Foundation
import Glibc
import Synchronization
import SystemIO
import TestSupport
import Testing

/// State touched only by tasks on one loop; the test reads it through `runSync`.
private final class LoopTally: @unchecked Sendable {
    var count = 0
    var offLoop = 0
    var outOfOrder = 0
    var lastSequence: [Int]

    init(producers: Int) { lastSequence = Array(repeating: -1, count: producers) }
}

@Suite struct EventLoopTaskTests {
    @Test func executeFromFourThreadsDeliversEachTaskOnceInOrder() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let tally = LoopTally(producers: 4)
            var producers: [SystemThread] = []
            for producer in 0..<4 {
                producers.append(
                    try SystemThread.spawn(name: "producer-\(producer)") {
                        for sequence in 0..<10_000 {
                            loop.execute {
                                if !loop.inEventLoop { tally.offLoop += 1 }
                                if tally.lastSequence[producer] != sequence - 1 { tally.outOfOrder += 1 }
                                tally.lastSequence[producer] = sequence
                                tally.count += 1
                            }
                        }
                    })
            }
            for thread in producers { thread.join() }
            #expect(waitUntil { (try? loop.sync { tally.count }) == 40_000 })
            let (count, offLoop, outOfOrder) = try loop.sync { (tally.count, tally.offLoop, tally.outOfOrder) }
            #expect(count == 40_000 && offLoop == 0 && outOfOrder == 0)
        }
    }

    @Test func runSyncReturnsResultsAndErrors() throws {
        struct Oops: Error {}
        try withLoops { group in
            let loop = group.loops[0]
            let onLoop = try loop.sync { loop.inEventLoop }
            #expect(onLoop)
            #expect(!loop.inEventLoop)
            #expect(throws: Oops.self) { try loop.sync { throw Oops() } }
        }
    }

    @Test func stoppedLoopRefusesTasks() throws {
        let group = try EventLoopGroup(loopCount: 1, name: "test-stop", clock: SystemClock())
        let loop = group.loops[0]
        group.shutdownGracefully()
        #expect(loop.execute {} == false)
        #expect(throws: EventLoopError.loopStopped) { try loop.runSync(timeout: testTimeout) { 1 } }
        group.shutdownGracefully()  // idempotent
    }

    @Test func tasksQueuedBeforeStopStillRun() throws {
        let group = try EventLoopGroup(loopCount: 1, name: "test-drain", clock: SystemClock())
        let loop = group.loops[0]
        let counter = Shared(0)
        for _ in 0..<1_000 { loop.execute { counter.update { $0 += 1 } } }
        loop.stop()
        group.shutdownGracefully()
        #expect(counter.value == 1_000)
    }

    @Test func groupRoundRobinAndPromptShutdownWhenIdle() throws {
        let group = try EventLoopGroup(loopCount: 3, name: "test-group", clock: SystemClock())
        let picks = (0..<6).map { _ in ObjectIdentifier(group.next()) }
        #expect(picks == (group.loops + group.loops).map { ObjectIdentifier($0) })
        let threads = try group.loops.map { loop in try loop.sync { pthread_self() } }
        #expect(Set(threads).count == 3)
        #expect(waitUntil { threadsAsleep(named: "test-group-", count: 3) }, "every loop in an unbounded epoll_wait")
        let clock = SystemClock()
        let start = clock.now()
        group.shutdownGracefully()
        #expect(clock.now() - start < 500_000_000)
    }

    @Test func runSyncTimesOutOnABusyLoop() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let release = try Doorbell()
            // A task that holds the loop until the test releases it (the scenario).
            loop.execute { _ = try? release.wait(timeout: nil, clock: SystemClock()) }
            #expect(throws: EventLoopError.timedOut) { try loop.runSync(timeout: 20_000_000) { 1 } }
            release.ring()
        }
    }
}

/// Whether `count` threads of this process named `prefix…` are asleep (state S in
/// /proc/self/task/*/stat): for a loop, waiting in epoll_wait.
func threadsAsleep(named prefix: String, count: Int) -> Bool {
    ProcessThread.all().filter { $0.name.hasPrefix(prefix) && $0.state == "S" }.count == count
}
