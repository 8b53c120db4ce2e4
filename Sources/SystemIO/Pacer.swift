import CSystem
import Glibc

/// Cuts long CPU work on a background thread into slices, and gives the core away after each.
///
/// A thread in the idle scheduling class never takes a core from a loop that wakes. But at a
/// scheduler tick the kernel may pick it over a loop that is already running (its share is
/// small, yet owed), and it then keeps that core until the next tick: 4 ms at HZ=250. That
/// was the daemon's DNS tail (docs/performance.md#background-threads). Yielding at the end
/// of each slice hands the core to a loop waiting for it, so a loop waits for at most one
/// slice; with nothing else waiting the yield returns at once, and the work goes on.
///
/// Slices are measured on the monotonic clock (through the vDSO: tens of nanoseconds, where
/// the thread's CPU clock is a system call of 400 on the benchmark machine). Time the thread
/// spent blocked (a commit's fsync) or waiting for a core counts too; that only makes it
/// yield sooner. Only a thread in the idle class yields: the same code on an ordinary
/// thread (a command run from a shell, a test) runs straight through. Where one unit of
/// work is smaller than a clock read, `callsPerRead` makes only every n-th `checkpoint`
/// read it.
public struct Pacer {
    /// The longest stretch of work between two rests: what a loop passed over at a tick
    /// waits at most. A rest is a system call of about a microsecond.
    public static let defaultSlice: Int64 = 25_000

    /// Nanoseconds of work a slice may take.
    public let slice: Int64
    /// How many `checkpoint` calls read the clock once.
    public let callsPerRead: Int
    /// Slices that ended in a rest call (in the idle class, a yield) since the pacer was made.
    public private(set) var rests = 0

    private let clock: () -> Int64
    private let rest: () -> Void
    private var sliceStart: Int64
    private var callsUntilRead: Int
    /// The thread whose stretch of work the slice measures: a pacer shared under a lock (a
    /// store's connection) is used by more than one thread, and one thread's work does not
    /// end another's slice.
    private var thread: pthread_t

    /// - Parameters:
    ///   - slice: nanoseconds of work between two rests.
    ///   - callsPerRead: checkpoints per clock read, for units of work under a microsecond.
    ///   - clock: monotonic nanoseconds (tests pass their own).
    ///   - rest: what ends a slice (tests count calls instead of sleeping).
    public init(
        slice: Int64 = Pacer.defaultSlice, callsPerRead: Int = 1,
        clock: @escaping () -> Int64 = Pacer.monotonicNanoseconds,
        rest: @escaping () -> Void = Pacer.restInIdleClass
    ) {
        self.slice = slice
        self.callsPerRead = max(1, callsPerRead)
        callsUntilRead = self.callsPerRead
        self.clock = clock
        self.rest = rest
        sliceStart = clock()
        thread = pthread_self()
    }

    /// Call often during long work: rests once `slice` nanoseconds have passed since the
    /// slice began (the last rest, or this thread's first call).
    public mutating func checkpoint() {
        callsUntilRead -= 1
        guard callsUntilRead == 0 else { return }
        callsUntilRead = callsPerRead
        endSliceIfDue()
    }

    /// Reads the clock and rests when the slice is over.
    private mutating func endSliceIfDue() {
        guard pthread_equal(thread, pthread_self()) != 0 else {
            thread = pthread_self()
            sliceStart = clock()
            return
        }
        guard clock() - sliceStart >= slice else { return }
        rests += 1
        rest()
        sliceStart = clock()
    }

    /// `MonotonicTime` as the signed nanoseconds the slices are counted in.
    public static func monotonicNanoseconds() -> Int64 { Int64(bitPattern: MonotonicTime.nanoseconds()) }

    /// Yields the core when the calling thread is in the idle class; otherwise returns at
    /// once. A yield, not a sleep: an ordinary thread waiting for this core gets it, and
    /// with none waiting the work goes on at once, where a sleep of 20 µs cost 70 with the
    /// kernel's timer slack, each slice.
    public static func restInIdleClass() {
        guard cs_thread_is_idle() == 1 else { return }
        sched_yield()
    }
}
