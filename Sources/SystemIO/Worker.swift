import Locks

/// A side thread of the daemon that works in rounds until stopped: a round, then a wait
/// for a ring, a timeout or a socket of its own. The shape the shared store's link, the
/// egress watch and the reverse names share: start once, ring to hurry, stop and join.
public final class Worker: Sendable {
    private let doorbell: Doorbell
    private let stopping = Lock(false)
    private let thread = Lock<SystemThread?>(nil)

    public init() throws(SystemError) { doorbell = try Doorbell() }

    /// Whether `stop` was called: the body's loop ends when it is.
    public var isStopping: Bool { stopping.withLock { $0 } }

    /// Starts the thread running `body`, unless it runs already or was stopped; `body`
    /// loops while `!isStopping`, waiting with `wait` between rounds.
    public func start(
        name: String, priority: SystemThread.Priority, _ body: @escaping @Sendable () -> Void
    ) throws(SystemError) {
        try thread.withLock { thread throws(SystemError) in
            guard thread == nil, !isStopping else { return }
            thread = try SystemThread.spawn(name: name, priority: priority, body)
        }
    }

    /// Whether the thread was started (and not yet stopped).
    public var isStarted: Bool { thread.withLock { $0 != nil } }

    /// Any thread: the waiting round starts now.
    public func ring() { doorbell.ring() }

    /// On the thread, between rounds: until rung, `timeout` passed on `clock` (nil: none),
    /// or `alongside` is readable.
    public func wait(timeout: Nanoseconds?, clock: any Clock, alongside: Int32? = nil) {
        _ = try? doorbell.wait(timeout: timeout, clock: clock, alongside: alongside)
        doorbell.drain()
    }

    /// Ends the loop and waits for the thread (at most the round under way).
    public func stop() {
        stopping.withLock { $0 = true }
        doorbell.ring()
        thread.withLock { thread in
            thread?.join()
            thread = nil
        }
    }
}
