import Locks
import Synchronization
import SystemIO

/// N event loops, each running on a thread of its own: the DNS proxy binds one
/// SO_REUSEPORT socket per loop; the HTTP proxy hands accepted connections round-robin.
///
/// Threading: every method may be called from any thread except a loop thread of this
/// group (`shutdownGracefully` would wait for itself).
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]
    private let threads: Lock<[SystemThread]>
    private let cursor = Atomic<Int>(0)

    /// Creates `count` loops (at least 1) and starts their threads, named `name-0`, `name-1`…
    /// Loop threads block the daemon's signals (`Signals.daemonSignals`). Every loop reads
    /// the time from `clock`.
    public init(loopCount count: Int, name: String = "pg-loop", clock: any Clock) throws(SystemError) {
        var loops: [EventLoop] = []
        for _ in 0..<max(count, 1) { loops.append(try EventLoop(clock: clock)) }
        var threads: [SystemThread] = []
        for (index, loop) in loops.enumerated() {
            do {
                threads.append(try SystemThread.spawn(name: "\(name)-\(index)") { loop.run() })
            } catch {
                for started in loops { started.stop() }
                for thread in threads { thread.join() }
                throw error
            }
        }
        self.loops = loops
        self.threads = Lock(threads)
    }

    /// The loops in turn (round-robin), for spreading connections.
    public func next() -> EventLoop {
        let index = cursor.add(1, ordering: .relaxed).oldValue
        return loops[index % loops.count]
    }

    /// Stops every loop and waits for its thread to end: each finishes its iteration, runs
    /// the tasks already queued and releases its handlers and timers. Idempotent; returns
    /// promptly from idle loops (the stop rings each loop's eventfd).
    public func shutdownGracefully() {
        for loop in loops { loop.stop() }
        let running = threads.withLock { threads in
            defer { threads.removeAll() }
            return threads
        }
        for thread in running { thread.join() }
    }

    deinit {
        assert(threads.withLock { $0.isEmpty }, "EventLoopGroup released without shutdownGracefully()")
    }
}
