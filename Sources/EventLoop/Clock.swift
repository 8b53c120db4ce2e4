import Glibc
import Synchronization

/// Nanoseconds on a monotonic clock (CLOCK_MONOTONIC: since boot, never steps back, not
/// wall time). Deadlines of timers and every timeout are in this unit.
public typealias Nanoseconds = UInt64

/// Where the loop and the state machines above it get the time. Injected, so that tests
/// drive time by hand (`ManualClock`) instead of sleeping. Called from any thread.
public protocol Clock: Sendable {
    func now() -> Nanoseconds
}

/// CLOCK_MONOTONIC: the default.
public struct MonotonicClock: Clock {
    public init() {}

    public func now() -> Nanoseconds {
        var time = timespec()
        // Cannot fail for CLOCK_MONOTONIC with a valid pointer.
        _ = clock_gettime(CLOCK_MONOTONIC, &time)
        return Nanoseconds(time.tv_sec) &* 1_000_000_000 &+ Nanoseconds(time.tv_nsec)
    }
}

/// A clock that moves only when told to. Thread-safe. A loop using it computes its epoll
/// timeout from this time, so after `advance` nudge the loop (`execute {}`) to have it look
/// at its timers again.
public final class ManualClock: Clock {
    private let current: Atomic<Nanoseconds>

    public init(start: Nanoseconds = 0) {
        current = Atomic(start)
    }

    public func now() -> Nanoseconds { current.load(ordering: .acquiring) }

    public func advance(by delta: Nanoseconds) {
        current.add(delta, ordering: .acquiringAndReleasing)
    }

    /// Moves to `instant`, which must not be earlier than now (monotonic).
    public func set(_ instant: Nanoseconds) {
        let old = current.exchange(instant, ordering: .acquiringAndReleasing)
        precondition(instant >= old, "ManualClock: time cannot go back")
    }
}
