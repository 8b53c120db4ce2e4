import EventLoop
import Glibc
import Locks
import SystemIO

/// Ten seconds: the bound on every wait in the loop-level tests; nothing should come near it.
public let testTimeout: Nanoseconds = 10_000_000_000

/// Polls `condition` every `interval` (1 ms unless told) until it holds (true) or
/// `timeout` passes (false). Tests wait on a condition, never for a fixed time: write
/// `#expect(waitUntil { … }, "what was awaited")` so a failure names the condition.
/// Conditions that start a process (dig, curl) deserve a longer interval, e.g. 20 ms.
public func waitUntil(
    timeout: Nanoseconds = testTimeout, interval: Nanoseconds = 1_000_000,
    _ condition: () throws -> Bool
) rethrows -> Bool {
    try waitFor(timeout: timeout, interval: interval) { try condition() ? true : nil } ?? false
}

/// Polls `produce` every `interval` until it gives a value, and returns it; nil when
/// `timeout` passed first. For waiting on a result to assert on, e.g. a dig answer whose
/// TTL has counted down.
public func waitFor<T>(
    timeout: Nanoseconds = testTimeout, interval: Nanoseconds = 1_000_000,
    _ produce: () throws -> T?
) rethrows -> T? {
    // The real clock: the point is to bound a wait on another thread or process.
    let clock = SystemClock()
    let deadline = clock.now() + timeout
    while true {
        if let value = try produce() { return value }
        if clock.now() > deadline { return nil }
        pause(interval)
    }
}

/// Sleeps the calling thread for `duration` nanoseconds (EINTR resumed). Not for waiting
/// on something — use `waitUntil` — but for what a scenario needs: a peer that stays
/// silent or pauses mid-message on purpose.
public func pause(_ duration: Nanoseconds) {
    var time = timespec(tv_sec: Int(duration / 1_000_000_000), tv_nsec: Int(duration % 1_000_000_000))
    var left = timespec()
    while nanosleep(&time, &left) != 0 && errno == EINTR { time = left }
}

/// Seconds as `Nanoseconds`, for timeouts written in seconds (`.seconds(2.5)`).
extension Nanoseconds {
    public static func seconds(_ value: Double) -> Nanoseconds { Nanoseconds(value * 1e9) }
}

/// A value shared between a loop and the test's thread.
public final class Shared<Value: Sendable>: Sendable {
    private let lock: Lock<Value>

    public init(_ value: Value) { lock = Lock(value) }

    public var value: Value { lock.withLock { $0 } }

    public func update<R>(_ body: (inout Value) -> R) -> R {
        lock.withLock { value in body(&value) }
    }
}
