import CSystem
import Glibc

/// A one-shot wake-up one thread waits on with a timeout and another rings: an eventfd
/// waited on with poll(2), because Swift's Glibc import has no timed semaphore or condition
/// wait on the monotonic clock. For `runSync` and other set-up waits, not the hot path.
public final class Doorbell: Sendable {
    private let descriptor: Int32

    public init() throws(SystemError) {
        descriptor = try systemCall("eventfd") { cs_eventfd() }
    }

    deinit { _ = Glibc.close(descriptor) }

    /// Any thread; ringing more than once is the same as once.
    public func ring() {
        _ = try? nonBlockingCall("write(eventfd)") { cs_eventfd_signal(descriptor) }
    }

    /// Resets a rung doorbell, so it can be waited on again.
    public func drain() {
        _ = try? nonBlockingCall("read(eventfd)") { cs_eventfd_drain(descriptor) }
    }

    /// Waits until rung (true) or until `timeout` has passed on `clock` (false); with
    /// `alongside`, also until that descriptor is readable (true as well), for a thread
    /// that waits on a socket of its own and a ring alike. On a clock moved by hand the
    /// timeout is its time: each move wakes the wait to look again.
    public func wait(timeout: Nanoseconds?, clock: any Clock, alongside: Int32? = nil) throws(SystemError) -> Bool {
        var descriptors = [descriptor]
        if let alongside, alongside >= 0 { descriptors.append(alongside) }
        return try waitReady(descriptors, deadline: timeout.map { clock.now() &+ $0 }, clock: clock)
    }
}
