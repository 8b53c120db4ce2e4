import CSystem
import Glibc

/// A POSIX thread running a closure: what `EventLoopGroup` runs its loops on (Foundation's
/// `Thread` is not used by the daemon). Also handy for blocking clients in tests.
public struct SystemThread: Sendable {
    private let handle: pthread_t

    /// Whom the kernel runs first when a thread of the daemon wants a core that another has.
    public enum Priority: Sendable {
        /// The loops and the control thread: what answers queries and watches them.
        case normal
        /// SCHED_IDLE: work that may wait (storing hits, syncing, serving /metrics, hashing
        /// a proxy password). A loop thread that wakes takes the core from it at once; one
        /// that is running can lose it to such a thread until the next tick, which is why
        /// its long work goes in slices (`Pacer`, docs/performance.md#background-threads).
        /// Once set it stays for the thread's life.
        case background
    }

    /// What the new thread runs, passed through pthread_create's `void *` argument.
    private final class Start {
        let name: String
        let priority: Priority
        let body: @Sendable () -> Void

        init(name: String, priority: Priority, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.priority = priority
            self.body = body
        }
    }

    /// Starts a thread named `name` (first 15 bytes, for ps/top/gdb) running `body`.
    /// - Parameter priority: `.background` for work no answer should wait on.
    /// - Parameter blockedSignals: blocked in the new thread from its first instruction, so
    ///   a process-directed signal never lands here (see `Signals`). The default blocks the
    ///   daemon's signals and SIGPIPE.
    public static func spawn(
        name: String, priority: Priority = .normal, blockedSignals: [Int32] = Signals.daemonSignals,
        _ body: @escaping @Sendable () -> Void
    ) throws(SystemError) -> SystemThread {
        // A new thread inherits its creator's mask: block here around pthread_create, then
        // restore, so there is no instant at which the new thread could take a signal.
        var blocked = Signals.set(of: blockedSignals)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }

        let start = Unmanaged.passRetained(Start(name: name, priority: priority, body: body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
                // Best effort: a kernel without SCHED_IDLE (none since 2.6.23) runs it as normal.
                // Before the name, so a thread seen by its name already has its class.
                if start.priority == .background { _ = cs_set_thread_idle() }
                _ = cs_set_thread_name(start.name)
                start.body()
                return nil
            }, start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw SystemError("pthread_create", errno: result, subject: name)
        }
        return SystemThread(handle: handle)
    }

    /// The calling thread's priority, as the kernel has it.
    public static var currentPriority: Priority { cs_thread_is_idle() == 1 ? .background : .normal }

    /// Lets the thread end on its own, its resources freed when it does: for a thread no one
    /// joins. Exactly once per thread, instead of `join`.
    public func detach() {
        let result = pthread_detach(handle)
        precondition(result == 0, "pthread_detach: \(SystemError("pthread_detach", errno: result))")
    }

    /// Waits for the thread to finish. Exactly once per thread, never from the thread itself.
    public func join() {
        let result = pthread_join(handle, nil)
        precondition(result == 0, "pthread_join: \(SystemError("pthread_join", errno: result))")
    }
}
