import EventLoop
import Locks
import ProxyCore
import Synchronization
import SystemIO

/// Runs proxy login checks (scrypt: tens of milliseconds and 16 MiB each) on one
/// background thread shared by every loop, so no loop thread waits on them and at most one
/// runs at a time — bounded memory on a Pi. At most `limit` may wait; past that a login is
/// answered `busy` (503) at once rather than queued behind a flood of guesses.
///
/// The thread (`pg-logins`) runs at background priority, so a burst of guesses never takes
/// a core from a loop; it starts with the first login of a burst and ends when none waits.
public final class LoginWorker: Sendable {
    private struct Queue {
        var jobs: [@Sendable () -> Void] = []
        var threadRunning = false
    }

    private let queue = Lock(Queue())
    private let waiting = Atomic<Int>(0)
    public let limit: Int

    public init(limit: Int = 64) {
        self.limit = max(1, limit)
    }

    /// Checks waiting or running now (a test that moves the clock waits for none).
    public var checksWaiting: Int { waiting.load(ordering: .relaxed) }

    /// Checks `login` off the calling thread and hands the outcome to `done` on `loop`'s
    /// thread. Any thread.
    func check(_ login: LoginCheck, answerOn loop: EventLoop, _ done: @escaping @Sendable (LoginOutcome) -> Void) {
        guard waiting.add(1, ordering: .relaxed).newValue <= limit else {
            waiting.subtract(1, ordering: .relaxed)
            _ = loop.execute { done(.busy) }
            return
        }
        let job: @Sendable () -> Void = { [self] in
            let outcome = login.run()
            waiting.subtract(1, ordering: .relaxed)
            // A loop that has stopped takes no task: its connections are gone anyway.
            _ = loop.execute { done(outcome) }
        }
        let start = queue.withLock { queue in
            queue.jobs.append(job)
            defer { queue.threadRunning = true }
            return !queue.threadRunning
        }
        guard start else { return }
        do {
            try SystemThread.spawn(name: "pg-logins", priority: .background) { [self] in runJobs() }.detach()
        } catch {
            // No thread (the process is at its limit). With no thread running, the queue
            // held only this login: it is answered busy, and the next login tries again.
            queue.withLock { queue in (queue.jobs, queue.threadRunning) = ([], false) }
            waiting.subtract(1, ordering: .relaxed)
            _ = loop.execute { done(.busy) }
        }
    }

    /// The worker thread: one job at a time, in order, until none is left.
    private func runJobs() {
        while true {
            let next = queue.withLock { queue -> (@Sendable () -> Void)? in
                guard !queue.jobs.isEmpty else {
                    queue.threadRunning = false
                    return nil
                }
                return queue.jobs.removeFirst()
            }
            guard let next else { return }
            next()
        }
    }
}
