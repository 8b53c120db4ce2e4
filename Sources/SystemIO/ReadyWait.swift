import CSystem
import Glibc

/// Waits until one of `descriptors` is ready for `events` (readable unless told; true) or
/// `deadline` on `clock` has passed (false); without a deadline, until one is ready. On a
/// clock moved by hand the deadline is its time: each move wakes the wait to look again.
/// For threads that may block (a doorbell, `doctor`'s probes, one question over UDP),
/// never a loop's.
public func waitReady(
    _ descriptors: [Int32], for events: Int16 = Int16(POLLIN), deadline: Nanoseconds?, clock: any Clock
) throws(SystemError) -> Bool {
    let steps = deadline == nil ? nil : clock.watchSteps()
    defer { if let steps { clock.stopWatchingSteps(steps) } }
    var entries = descriptors.map { pollfd(fd: $0, events: events, revents: 0) }
    let watched = entries.count
    if let steps { entries.append(pollfd(fd: steps, events: Int16(POLLIN), revents: 0)) }
    while true {
        var waitMilliseconds: Int32 = -1
        if let deadline {
            let now = clock.now()
            waitMilliseconds = now >= deadline ? 0 : Int32(clamping: (deadline - now + 999_999) / 1_000_000)
        }
        for index in entries.indices { entries[index].revents = 0 }
        // Not through systemCall: after EINTR the remaining time must be recomputed.
        let ready = poll(&entries, nfds_t(entries.count), waitMilliseconds)
        if ready < 0, errno != EINTR { throw SystemError("poll", errno: errno) }
        if entries[..<watched].contains(where: { $0.revents != 0 }) { return true }
        // Past the deadline: a clock that keeps moving does not hold the wait off.
        if ready >= 0, waitMilliseconds == 0 { return false }
        if let steps, entries[watched].revents != 0 {
            // The clock moved. Past the deadline the wait ends with the step still unread
            // until the watch stops, so whoever made the step (`advanceSettled`) counts this
            // thread as busy until it waits again; before it, the step is taken in.
            if let deadline, clock.now() >= deadline { return false }
            _ = try? nonBlockingCall("read(eventfd)") { cs_eventfd_drain(steps) }
        }
    }
}
