import Dispatch
import EventLoop
import ProxyCore
import Synchronization

/// Runs proxy login checks (scrypt: tens of milliseconds and 16 MiB each) on one
/// background queue shared by every loop, so no loop thread waits on them and at most one
/// runs at a time — bounded memory on a Pi. At most `limit` may wait; past that a login is
/// answered `busy` (503) at once rather than queued behind a flood of guesses.
public final class LoginWorker: Sendable {
    private let queue = DispatchQueue(label: "phosra-gate.proxy-logins")
    private let waiting = Atomic<Int>(0)
    public let limit: Int

    public init(limit: Int = 64) {
        self.limit = max(1, limit)
    }

    /// Checks `login` off the calling thread and hands the outcome to `done` on `loop`'s
    /// thread. Any thread.
    func check(_ login: LoginCheck, answerOn loop: EventLoop, _ done: @escaping @Sendable (LoginOutcome) -> Void) {
        guard waiting.add(1, ordering: .relaxed).newValue <= limit else {
            waiting.subtract(1, ordering: .relaxed)
            _ = loop.execute { done(.busy) }
            return
        }
        queue.async { [self] in
            let outcome = login.run()
            waiting.subtract(1, ordering: .relaxed)
            // A loop that has stopped takes no task: its connections are gone anyway.
            _ = loop.execute { done(outcome) }
        }
    }
}
