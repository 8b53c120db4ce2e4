import SystemIO
import TestSupport
import Testing

/// `ManualClock.advanceSettled`: a step, then back only once every thread that waited on
/// the clock has taken it in and waits again, so a test can check what did not happen.
@Suite(.blocking) struct SettledStepTests {
    /// A thread that waits a minute on the clock, then runs a round that ends when the
    /// test says (`proceed`), counts it, and waits again; until `stop`.
    final class Rounds: Sendable {
        let count = Shared(0)
        let inRound = Shared(false)
        let proceed: Doorbell
        private let wake: Doorbell
        private let stopping = Shared(false)
        private let thread: SystemThread

        init(clock: ManualClock) throws {
            let (proceed, wake) = (try Doorbell(), try Doorbell())
            let (count, inRound, stopping) = (count, inRound, stopping)
            self.proceed = proceed
            self.wake = wake
            thread = try SystemThread.spawn(name: "settle-test") {
                while !stopping.value {
                    guard (try? wake.wait(timeout: 60_000_000_000, clock: clock)) == false else { continue }
                    inRound.update { $0 = true }
                    // The round's own work, as long as the test wants: not on the clock.
                    _ = try? proceed.wait(timeout: nil, clock: clock)
                    proceed.drain()
                    count.update { $0 += 1 }
                    inRound.update { $0 = false }
                }
            }
        }

        func stop() {
            stopping.update { $0 = true }
            wake.ring()
            proceed.ring()
            thread.join()
        }
    }

    /// Runs `advanceSettled` on a thread of its own; its result once it returned.
    final class Stepper: Sendable {
        let result = Shared<Bool?>(nil)
        private let thread: SystemThread

        init(_ clock: ManualClock, by delta: Nanoseconds, timeout: Nanoseconds = 10_000_000_000) throws {
            let result = self.result
            thread = try SystemThread.spawn(name: "settle-step") {
                let settled = clock.advanceSettled(by: delta, timeout: timeout)
                result.update { $0 = settled }
            }
        }

        func join() { thread.join() }
    }

    @Test func aStepReturnsOnlyOnceTheRoundItBroughtDueIsDone() throws {
        let clock = ManualClock()
        let rounds = try Rounds(clock: clock)
        defer { rounds.stop() }
        #expect(waitUntil { clock.watcherCount == 1 }, "the thread waits on the clock")
        let stepper = try Stepper(clock, by: 61_000_000_000)
        defer { stepper.join() }
        #expect(waitUntil { rounds.inRound.value }, "the minute has passed: the round runs")
        #expect(stepper.result.value == nil, "not back while the round runs")
        rounds.proceed.ring()
        #expect(waitUntil { stepper.result.value != nil })
        #expect(stepper.result.value == true)
        #expect(rounds.count.value == 1, "the round is done when the step is back")
        #expect(clock.watcherCount == 1, "and the thread waits again")
    }

    @Test func aStepShortOfTheDeadlineReturnsWithNothingRun() throws {
        let clock = ManualClock()
        let rounds = try Rounds(clock: clock)
        defer { rounds.stop() }
        #expect(waitUntil { clock.watcherCount == 1 }, "the thread waits on the clock")
        #expect(clock.advanceSettled(by: 30_000_000_000))
        #expect(rounds.count.value == 0 && !rounds.inRound.value)
        #expect(clock.advanceSettled(by: 29_000_000_000), "a minute less a second")
        #expect(rounds.count.value == 0 && !rounds.inRound.value)
        #expect(!clock.stepsPending)
    }

    @Test func aRoundThatDoesNotEndIsFalseAtTheTimeout() throws {
        let clock = ManualClock()
        let rounds = try Rounds(clock: clock)
        defer { rounds.stop() }
        #expect(waitUntil { clock.watcherCount == 1 }, "the thread waits on the clock")
        // The bound under test: a fifth of a second of real time, the round held all along.
        #expect(!clock.advanceSettled(by: 61_000_000_000, timeout: 200_000_000))
        #expect(rounds.inRound.value)
    }
}
