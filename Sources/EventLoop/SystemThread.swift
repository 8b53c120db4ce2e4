import CSystem
import Glibc
import SystemIO

/// A POSIX thread running a closure: what `EventLoopGroup` runs its loops on (Foundation's
/// `Thread` is not used in this module). Also handy for blocking clients in tests.
public struct SystemThread: Sendable {
    private let handle: pthread_t

    /// What the new thread runs, passed through pthread_create's `void *` argument.
    private final class Start {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts a thread named `name` (first 15 bytes, for ps/top/gdb) running `body`.
    /// - Parameter blockedSignals: blocked in the new thread from its first instruction, so
    ///   a process-directed signal never lands here (see `Signals`). The default blocks the
    ///   daemon's signals and SIGPIPE.
    public static func spawn(
        name: String, blockedSignals: [Int32] = Signals.daemonSignals, _ body: @escaping @Sendable () -> Void
    ) throws(SystemError) -> SystemThread {
        // A new thread inherits its creator's mask: block here around pthread_create, then
        // restore, so there is no instant at which the new thread could take a signal.
        var blocked = Signals.set(of: blockedSignals)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }

        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
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

    /// Waits for the thread to finish. Exactly once per thread, never from the thread itself.
    public func join() {
        let result = pthread_join(handle, nil)
        precondition(result == 0, "pthread_join: \(SystemError("pthread_join", errno: result))")
    }
}
