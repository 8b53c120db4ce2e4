import EventLoop
import Locks
import Synchronization
import SystemIO
import TestSupport
import Testing

@testable import HTTPProxy
@testable import ProxyCore

/// The proxy's login checks run on their own queue, never on a loop thread, one at a
/// time, with the outcome handed back on the loop (docs/proxy.md#proxy-authentication).
@Suite(.blocking) struct LoginWorkerTests {
    final class Record: Sendable {
        let outcomes = Lock<[(user: String, outcome: LoginOutcome, onLoop: Bool)]>([])
        let checkedOnLoop = Atomic<Bool>(false)
        let checkedInTheForeground = Atomic<Bool>(false)
        let done = try! Doorbell()
    }

    @Test func checksRunOffTheLoopOneAtATimeAndPastTheLimitAnswerBusy() throws {
        let group = try EventLoopGroup(loopCount: 1, name: "login-test", clock: SystemClock())
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let record = Record()
        let release = try Doorbell()
        let logins = ProxyLogins(check: { user, _ in
            if loop.inEventLoop { record.checkedOnLoop.store(true, ordering: .relaxed) }
            // A burst of guesses must never take a core from a loop.
            if SystemThread.currentPriority != .background {
                record.checkedInTheForeground.store(true, ordering: .relaxed)
            }
            // The first check holds the queue until the test lets it go.
            if user == "slow" { _ = try? release.wait(timeout: 10_000_000_000, clock: SystemClock()) }
            return user != "wrong"
        })
        let worker = LoginWorker(limit: 2)
        for user in ["slow", "wrong", "third"] {
            worker.check(LoginCheck(logins: logins, user: user, password: [1]), answerOn: loop) { outcome in
                let count = record.outcomes.withLock {
                    $0.append((user, outcome, loop.inEventLoop))
                    return $0.count
                }
                if count == 3 { record.done.ring() }
            }
        }
        // Two wait (the limit); the third is answered at once, before the slow one ends.
        _ = try record.done.wait(timeout: 200_000_000, clock: SystemClock())
        #expect(record.outcomes.withLock { $0.map(\.user) } == ["third"])
        release.ring()
        #expect(try record.done.wait(timeout: 10_000_000_000, clock: SystemClock()))
        let outcomes = record.outcomes.withLock { $0 }
        #expect(outcomes.map(\.user) == ["third", "slow", "wrong"])
        #expect(outcomes.map(\.outcome) == [.busy, .accepted, .rejected])
        #expect(outcomes.allSatisfy { $0.onLoop })
        let checkedOnLoop = record.checkedOnLoop.load(ordering: .relaxed)
        #expect(!checkedOnLoop)
        let checkedInTheForeground = record.checkedInTheForeground.load(ordering: .relaxed)
        #expect(!checkedInTheForeground)
    }
}
