import SystemIO

/// A timer receiver that needs no closure: the loop calls `timerFired(tag:)` on it. For
/// timers scheduled per query or per connection (upstream timeouts, idle timeouts), where a
/// capturing closure would cost an allocation each time; the tag tells the target which
/// of its timers fired.
public protocol TimerTarget: AnyObject {
    func timerFired(tag: UInt64)
}

/// What a timer does when it fires. The loop holds it until then (or until cancelled).
enum TimerAction {
    case closure(() -> Void)
    case target(any TimerTarget, tag: UInt64)

    func fire() {
        switch self {
        case .closure(let body): body()
        case .target(let target, let tag): target.timerFired(tag: tag)
        }
    }
}

/// Timers: callbacks at a deadline on the loop's clock, run on the loop's thread after the
/// iteration's I/O events. Deadlines in the past fire on the next iteration; equal deadlines
/// fire in the order scheduled. All of this is loop-confined (see `EventLoop`); from another
/// thread, schedule inside `execute { }`.
extension EventLoop {
    /// Runs `body` once `clock.now() >= deadline`.
    @discardableResult
    public func scheduleTimer(at deadline: Nanoseconds, _ body: @escaping () -> Void) -> TimerHandle {
        assertInLoop()
        return timers.schedule(at: deadline, .closure(body))
    }

    /// Runs `body` once `delay` nanoseconds have passed on the loop's clock.
    @discardableResult
    public func scheduleTimer(after delay: Nanoseconds, _ body: @escaping () -> Void) -> TimerHandle {
        scheduleTimer(at: clock.now() &+ delay, body)
    }

    /// Calls `target.timerFired(tag:)` once `clock.now() >= deadline`; allocation-free once
    /// the loop's timer storage is warm. The loop holds `target` strongly until then.
    @discardableResult
    public func scheduleTimer(at deadline: Nanoseconds, target: any TimerTarget, tag: UInt64 = 0) -> TimerHandle {
        assertInLoop()
        return timers.schedule(at: deadline, .target(target, tag: tag))
    }

    /// Cancels a pending timer and releases what it holds. False if it already fired or was
    /// cancelled (a stale handle is harmless).
    @discardableResult
    public func cancelTimer(_ handle: TimerHandle) -> Bool {
        assertInLoop()
        // Bound to a local so the closure's captures are released after the heap's update.
        let removed = timers.cancel(handle)
        return removed != nil
    }

    /// Timers scheduled and not yet fired or cancelled.
    public var pendingTimerCount: Int {
        assertInLoop()
        return timers.count
    }

    /// The epoll_wait timeout in milliseconds: -1 (no timer: sleep until an event), 0 (a
    /// timer is due) or the time to the earliest deadline rounded up, so a timer never
    /// wakes the loop before it is due.
    func pollTimeout(now: Nanoseconds) -> Int32 {
        guard let earliest = timers.earliestDeadline else { return -1 }
        guard earliest > now else { return 0 }
        return Int32(clamping: (earliest - now + 999_999) / 1_000_000)
    }

    /// Fires the timers due now that were scheduled before this pass began; one scheduled
    /// by a firing timer waits for the next iteration, so a timer re-arming itself at "now"
    /// cannot starve I/O.
    func fireDueTimers() {
        guard let earliest = timers.earliestDeadline else { return }
        let now = clock.now()
        guard earliest <= now else { return }
        let limit = timers.nextSequence
        while let action = timers.popDue(now: now, scheduledBefore: limit) {
            action.fire()
        }
    }
}
