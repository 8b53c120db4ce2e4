import EventLoop
import Glibc
import SystemIO
import TestSupport
import Testing

/// Signals through a `SignalSource`.
///
/// Why the process-wide case runs in a child process: in this test runner, libdispatch's
/// `dispatch_main` parks the main thread in `sigsuspend` with an empty mask, so that thread
/// accepts every process-directed signal and SIGUSR1 would take its default action (the
/// run dies) however the other threads are set up. The daemon does not park its main
/// thread that way; the child, started afresh, is set up as the daemon is.
@Suite struct SignalTests {
    /// `kill(getpid(), SIGUSR1)` in a fresh process that blocks it first thing, as the
    /// daemon does: the callback runs on the loop's thread (see `signalChildScenario`).
    @Test func processSignalArrivesOnTheLoopThread() throws {
        let status = try runSelfAsChild(environment: "\(signalChildVariable)=1", timeout: testTimeout)
        #expect(status == .exited(0), "0: delivered on the loop thread; 1: not delivered or off-loop; 2: set-up failed")
    }

    /// A signal aimed at the loop's own thread (which blocks it) is read by its signalfd.
    @Test func threadSignalArrivesOnTheLoopThread() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let seen = Shared<[String]>([])
            let loopThread = try loop.sync { () -> pthread_t in
                _ = try SignalSource(loop: loop, signals: [SIGUSR1]) { number in
                    seen.update { $0.append("\(number) on loop: \(loop.inEventLoop)") }
                }
                return pthread_self()
            }
            #expect(pthread_kill(loopThread, SIGUSR1) == 0)
            #expect(waitUntil { !seen.value.isEmpty })
            #expect(seen.value == ["\(SIGUSR1) on loop: true"])
        }
    }

    @Test func spawnedThreadsBlockTheDaemonSignals() throws {
        let masks = Shared<[Int32]>([])
        let thread = try SystemThread.spawn(name: "mask-check") {
            var current = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &current)
            masks.update { $0 = Signals.daemonSignals.map { sigismember(&current, $0) } }
        }
        thread.join()
        #expect(masks.value == Array(repeating: 1, count: Signals.daemonSignals.count))
    }
}
