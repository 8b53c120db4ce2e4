import EventLoop
import Glibc
import SystemIO

/// An instant on the client's monotonic clock by which a step must be done.
struct Deadline: Comparable {
    let instant: Nanoseconds
    let clock: any Clock

    static func after(_ duration: Duration, clock: any Clock) -> Deadline {
        let (instant, overflow) = clock.now().addingReportingOverflow(duration.nanoseconds)
        return Deadline(instant: overflow ? .max : instant, clock: clock)
    }

    static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.instant < rhs.instant }
    static func == (lhs: Deadline, rhs: Deadline) -> Bool { lhs.instant == rhs.instant }

    /// Milliseconds left for poll(2), rounded up so it never wakes just short; 0 when past.
    var pollTimeout: Int32 {
        let now = clock.now()
        guard instant > now else { return 0 }
        return Int32(clamping: (instant - now + 999_999) / 1_000_000)
    }

    var hasPassed: Bool { clock.now() >= instant }
}

extension Duration {
    /// Whole nanoseconds, 0 for negative durations, saturating at UInt64.max.
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ UInt64(max(attoseconds, 0) / 1_000_000_000)
    }
}

/// Waits until `socket` is ready for `events` (POLLIN/POLLOUT) or has an error or hang-up
/// to report (the next call on it then says what), or throws `.timeout(phase)`.
func waitFor(_ socket: Socket, _ events: Int16, until deadline: Deadline, phase: HTTPError.Phase) throws(HTTPError) {
    while true {
        let timeout = deadline.pollTimeout
        var entry = pollfd(fd: socket.descriptor, events: events, revents: 0)
        let ready = poll(&entry, 1, timeout)
        if ready > 0 { return }
        if ready < 0 {
            if errno == EINTR { continue }
            throw .io(SystemError("poll", errno: errno, subject: socket.address?.description))
        }
        if timeout == 0 || deadline.hasPassed { throw .timeout(phase) }
    }
}
