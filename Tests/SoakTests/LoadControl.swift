import Foundation

/// Runs the load loops, each on a thread of its own, and holds them all still on request:
/// `pause()` returns once every loop has finished its step and closed what it holds, so the
/// daemon can be measured quiet; `stop()` ends them for good. Every step is bounded by its
/// sockets' and programs' timeouts, so neither waits long.
final class LoadControl: @unchecked Sendable {
    private enum Mode { case running, paused, stopped }

    private let condition = NSCondition()
    private var mode = Mode.running
    private var loops = 0
    private var parked = 0
    private var finished = 0

    /// Starts `step` every `interval` seconds (at once again when a step took longer).
    /// `quiesce` runs on the loop's thread when it pauses or stops: it closes the loop's
    /// held connections.
    func spawn(
        _ name: String, every interval: Double, quiesce: @escaping @Sendable () -> Void = {},
        step: @escaping @Sendable () -> Void
    ) {
        condition.lock()
        loops += 1
        condition.unlock()
        let thread = Thread { [self] in
            while proceed(quiesce) {
                let started = monotonicSeconds()
                step()
                rest(until: started + interval)
            }
            quiesce()
            condition.lock()
            finished += 1
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "soak \(name)"
        thread.start()
    }

    /// Holds every loop still, each with its connections closed.
    func pause() {
        condition.lock()
        mode = .paused
        while parked < loops - finished { condition.wait() }
        condition.unlock()
    }

    func resume() {
        condition.lock()
        mode = .running
        condition.broadcast()
        condition.unlock()
    }

    /// Ends every loop and waits for them.
    func stop() {
        condition.lock()
        mode = .stopped
        condition.broadcast()
        while finished < loops { condition.wait() }
        condition.unlock()
    }

    /// False once stopped; while paused, quiesces once and waits.
    private func proceed(_ quiesce: @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard mode == .paused else { return mode == .running }
        condition.unlock()
        quiesce()
        condition.lock()
        parked += 1
        condition.broadcast()
        while mode == .paused { condition.wait() }
        parked -= 1
        return mode == .running
    }

    /// Sleeps until `deadline` on the monotonic clock, waking early for a pause or stop.
    private func rest(until deadline: Double) {
        condition.lock()
        defer { condition.unlock() }
        while mode == .running {
            let left = deadline - monotonicSeconds()
            guard left > 0 else { return }
            _ = condition.wait(until: Date(timeIntervalSinceNow: left))
        }
    }
}
