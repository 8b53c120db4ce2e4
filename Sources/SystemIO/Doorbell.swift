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
        let deadline = timeout.map { clock.now() &+ $0 }
        let steps = deadline == nil ? nil : clock.watchSteps()
        defer { if let steps { clock.stopWatchingSteps(steps) } }
        var entries = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        if let alongside, alongside >= 0 {
            entries.append(pollfd(fd: alongside, events: Int16(POLLIN), revents: 0))
        }
        let rung = entries.count
        if let steps { entries.append(pollfd(fd: steps, events: Int16(POLLIN), revents: 0)) }
        while true {
            var waitMilliseconds: Int32 = -1
            if let deadline {
                let now = clock.now()
                if now >= deadline {
                    waitMilliseconds = 0
                } else {
                    waitMilliseconds = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
                }
            }
            for index in entries.indices { entries[index].revents = 0 }
            // Not through systemCall: after EINTR the remaining time must be recomputed.
            let ready = poll(&entries, nfds_t(entries.count), waitMilliseconds)
            if ready < 0, errno != EINTR { throw SystemError("poll", errno: errno) }
            if entries[..<rung].contains(where: { $0.revents != 0 }) { return true }
            // Past the deadline: a clock that keeps moving does not hold the wait off.
            if ready >= 0, waitMilliseconds == 0 { return false }
            if let steps, entries[rung].revents != 0 {
                // The clock moved: the deadline is looked at again.
                _ = try? nonBlockingCall("read(eventfd)") { cs_eventfd_drain(steps) }
            }
        }
    }
}
