import CThreadSanitizer
import Synchronization

/// A `Synchronization.Mutex` whose hand-overs ThreadSanitizer sees. Use it instead of `Mutex`.
///
/// On Linux, `Mutex` waits in the kernel (a priority-inheriting futex) when the lock is
/// contended, and the kernel, not a user-space atomic, hands it to the next holder. TSan does
/// not model those system calls, so it sees no order between two holders and reports their
/// accesses to the guarded state as races, in whichever places a run's timing made contend.
/// In the build `scripts/tsan` makes (`PHOSRA_TSAN`), `withLock` therefore marks the lock
/// acquired just after locking and released just before unlocking. Every other build compiles
/// the marks out, so `Lock` costs what `Mutex` costs (docs/ARCHITECTURE.md#threads).
public struct Lock<Value: ~Copyable>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<Value>

    @inlinable
    public init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with the value while holding the lock, like `Mutex.withLock`.
    @inlinable @inline(__always)
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if PHOSRA_TSAN
            // The lock's own address names it to TSan: it stays put while the lock lives (a
            // borrowed `~Copyable` value is not moved), and taking it reads nothing guarded.
            // The value's address would not do: forming `&value` is an access TSan records,
            // before the acquire.
            let address = withUnsafePointer(to: self) { UnsafeMutableRawPointer(mutating: $0) }
            return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
                phosra_tsan_acquire(address)
                defer { phosra_tsan_release(address) }
                return try body(&value)
            }
        #else
            return try mutex.withLock(body)
        #endif
    }
}
