import CSystem
import Glibc
import Locks
import SystemIO

/// Work sent to a loop from any thread.
typealias LoopTask = @Sendable () -> Void

/// The cross-thread queue, behind the loop's mutex.
struct TaskQueue {
    var pending: [LoopTask] = []
    /// False once the loop has finished: later tasks are refused, not silently kept.
    var open = true
}

/// Why `runSync` did not return the body's result.
public enum EventLoopError: Error, Equatable, Sendable {
    /// The loop has finished `run()` and takes no more tasks.
    case loopStopped
    /// The body did not finish within the timeout (it may still run later).
    case timedOut
}

/// The loop's eventfd: written by `execute`/`stop` from any thread to end an epoll_wait.
final class Waker: Selectable, Sendable {
    let descriptor: Int32

    init() throws(SystemError) {
        descriptor = try systemCall("eventfd") { cs_eventfd() }
    }

    deinit { _ = Glibc.close(descriptor) }

    /// Any thread. EAGAIN means the counter is saturated: the loop is awake already.
    func wake() {
        _ = try? nonBlockingCall("write(eventfd)") { cs_eventfd_signal(descriptor) }
    }

    func readable() {
        _ = try? nonBlockingCall("read(eventfd)") { cs_eventfd_drain(descriptor) }
    }

    func writable() {}
    func hangup() {}
}

/// A loop on a clock moved by hand (`ManualClock`): readable when the clock moves, so the
/// loop wakes and fires the timers now due, as it would when real time passed.
final class StepWatcher: Selectable, Sendable {
    let descriptor: Int32
    private let clock: any Clock

    init?(clock: any Clock) {
        guard let descriptor = clock.watchSteps() else { return nil }
        self.descriptor = descriptor
        self.clock = clock
    }

    deinit { clock.stopWatchingSteps(descriptor) }

    func readable() {
        _ = try? nonBlockingCall("read(eventfd)") { cs_eventfd_drain(descriptor) }
    }

    func writable() {}
    func hangup() {}
}

extension EventLoop {
    /// Runs `task` on the loop's thread, after the current iteration's events and timers,
    /// in the order tasks were queued. Any thread. The queue's mutex is held only to
    /// append; the eventfd is written only when the queue was empty (the loop drains the
    /// whole queue per wake-up).
    /// - Returns: false, dropping the task, when the loop has finished running.
    @discardableResult
    public func execute(_ task: @escaping @Sendable () -> Void) -> Bool {
        let (accepted, wasEmpty) = tasks.withLock { queue in
            guard queue.open else { return (false, false) }
            queue.pending.append(task)
            return (true, queue.pending.count == 1)
        }
        if wasEmpty { waker.wake() }
        return accepted
    }

    /// Runs `body` on the loop's thread and waits for its result. For set-up and tear-down
    /// (binding sockets, registering handlers), never on the hot path. Must not be called on
    /// the loop's own thread (it would wait for itself); without a timeout, it waits forever
    /// for a loop that is never run.
    /// - Parameter timeout: how long to wait; nil waits as long as it takes.
    /// - Throws: what `body` throws; `EventLoopError.loopStopped` if the loop no longer
    ///   runs tasks, `.timedOut` when the timeout passed first.
    public func runSync<T: Sendable>(
        timeout: Nanoseconds? = nil, _ body: @escaping @Sendable () throws -> T
    ) throws -> T {
        precondition(!inEventLoop, "EventLoop.runSync on its own thread would wait forever")
        let outcome = Lock<Result<T, any Error>?>(nil)
        let done = try Doorbell()
        let accepted = execute {
            let result = Result { try body() }
            outcome.withLock { $0 = result }
            done.ring()
        }
        guard accepted else { throw EventLoopError.loopStopped }
        // Real time whatever the loop's clock: a set-up wait on another thread, bounded for
        // a loop that never gets to the task (a ManualClock would never let it pass).
        guard try done.wait(timeout: timeout, clock: SystemClock()) else { throw EventLoopError.timedOut }
        guard let result = outcome.withLock({ $0 }) else { throw EventLoopError.loopStopped }
        return try result.get()
    }

    /// Runs what was queued before this call; tasks queued meanwhile wait for the next
    /// iteration (whose epoll_wait returns at once, since they rang the waker).
    func runTasks() {
        tasks.withLock { queue in
            if !queue.pending.isEmpty { swap(&queue.pending, &runningTasks) }
        }
        guard !runningTasks.isEmpty else { return }
        for task in runningTasks { task() }
        // Keeps the capacity: the two arrays swap back and forth without reallocating.
        runningTasks.removeAll(keepingCapacity: true)
    }

    /// Refuses new tasks and runs those already queued (so none is lost at shut-down).
    func closeTaskQueue() {
        runTasks()
        tasks.withLock { queue in
            queue.open = false
            swap(&queue.pending, &runningTasks)
        }
        for task in runningTasks { task() }
        runningTasks.removeAll()
    }
}
