import EventLoop
import Glibc
import Synchronization

/// Ten seconds: the bound on every wait in the loop-level tests; nothing should come near it.
public let testTimeout: Nanoseconds = 10_000_000_000

/// Polls `condition` every millisecond until it holds (true) or `timeout` passes (false).
public func waitUntil(timeout: Nanoseconds = testTimeout, _ condition: () -> Bool) -> Bool {
    let clock = SystemClock()
    let deadline = clock.now() + timeout
    while !condition() {
        if clock.now() > deadline { return false }
        usleep(1_000)
    }
    return true
}

/// A value shared between a loop and the test's thread.
public final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    public var value: Value { mutex.withLock { $0 } }

    public func update<R>(_ body: (inout Value) -> R) -> R {
        mutex.withLock { value in body(&value) }
    }
}
