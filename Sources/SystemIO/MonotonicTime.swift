import Glibc

/// CLOCK_MONOTONIC: since boot, never steps back, not wall time. The one place it is read:
/// `SystemClock.now()` (EventLoop) for timers and intervals, and the `Pacer`'s slices here,
/// below the modules that take a `Clock`.
public enum MonotonicTime {
    /// Nanoseconds since boot (through the vDSO: tens of nanoseconds, no system call).
    public static func nanoseconds() -> UInt64 {
        var time = timespec()
        // Cannot fail for CLOCK_MONOTONIC with a valid pointer.
        _ = clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
