import CSystem
import Glibc
import Locks

/// Nanoseconds on a monotonic clock (CLOCK_MONOTONIC: since boot, never steps back, not
/// wall time). Deadlines of timers and every timeout are in this unit.
public typealias Nanoseconds = UInt64

/// An instant on the wall clock: nanoseconds since the Unix epoch (UTC, leap seconds not
/// counted), as CLOCK_REALTIME gives it. The wall clock can step either way (NTP, an
/// administrator, a board without a battery-backed clock that boots in 1970), so it is for
/// timestamps and the time of day only; intervals and deadlines use `Clock.now()`.
public struct WallTime: Sendable, Hashable, Comparable {
    public var unixNanoseconds: Int64

    public init(unixNanoseconds: Int64) { self.unixNanoseconds = unixNanoseconds }

    public init(unixSeconds: Int64, nanoseconds: Int64 = 0) {
        unixNanoseconds = unixSeconds &* 1_000_000_000 &+ nanoseconds
    }

    /// Whole seconds, rounded down (also before 1970).
    public var unixSeconds: Int64 { floorDivide(unixNanoseconds, 1_000_000_000) }

    /// Whole milliseconds, rounded down.
    public var unixMilliseconds: Int64 { floorDivide(unixNanoseconds, 1_000_000) }

    /// `delta` nanoseconds later (earlier when negative).
    public func advanced(by delta: Int64) -> WallTime { WallTime(unixNanoseconds: unixNanoseconds &+ delta) }

    public static func < (lhs: WallTime, rhs: WallTime) -> Bool { lhs.unixNanoseconds < rhs.unixNanoseconds }

    private func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }
}

/// Where everything that reads the time gets it: the monotonic clock for intervals,
/// deadlines and timers, the wall clock for timestamps and the time of day. Injected —
/// one `SystemClock` made by the composition root (Gateway) and passed down — so that
/// tests drive both by hand (`ManualClock`) instead of sleeping, and so that a wall-clock
/// step can be shown to fire no timer early and starve none. Called from any thread.
/// Pure modules (Policy, DomainMatch, DNSWire, Zoneinfo) take instants as parameters.
public protocol Clock: Sendable {
    /// Monotonic time: never steps back, unrelated to the date.
    func now() -> Nanoseconds
    /// Wall-clock time: the date and time of day; may step either way.
    func wall() -> WallTime
    /// For a clock moved by hand: a new eventfd that becomes readable each time the clock
    /// moves, so whoever waits for a time on it (a loop's timers, a `Doorbell`'s timeout)
    /// wakes and looks again; given back with `stopWatchingSteps`. Nil for a clock that
    /// moves by itself.
    func watchSteps() -> Int32?
    /// Closes a descriptor `watchSteps` made.
    func stopWatchingSteps(_ descriptor: Int32)
}

extension Clock {
    public func watchSteps() -> Int32? { nil }
    public func stopWatchingSteps(_ descriptor: Int32) {}
}

extension Clock {
    /// Seconds on the monotonic clock since `start` (an earlier `now()`), for reporting
    /// how long something took.
    public func seconds(since start: Nanoseconds) -> Double { Double(now() &- start) / 1e9 }
}

/// The system's clocks: CLOCK_MONOTONIC and CLOCK_REALTIME.
public struct SystemClock: Clock {
    /// Nil: CLOCK_REALTIME. Otherwise the wall clock is the monotonic clock plus this.
    private let wallOffset: Int64?

    public init() { wallOffset = nil }

    /// For tests of the real binary only: a wall clock that reads `start` now and then
    /// advances with the monotonic clock, whatever CLOCK_REALTIME says — so a test can run
    /// the daemon at a chosen time of day (`PHOSRA_GATE_TEST_CLOCK`, read by Gateway).
    public init(wallStartingAt start: WallTime) {
        wallOffset = start.unixNanoseconds &- Int64(bitPattern: MonotonicTime.nanoseconds())
    }

    public func now() -> Nanoseconds { MonotonicTime.nanoseconds() }

    public func wall() -> WallTime {
        if let wallOffset {
            return WallTime(unixNanoseconds: Int64(bitPattern: MonotonicTime.nanoseconds()) &+ wallOffset)
        }
        var time = timespec()
        // Cannot fail for CLOCK_REALTIME with a valid pointer.
        _ = clock_gettime(CLOCK_REALTIME, &time)
        return WallTime(unixSeconds: Int64(time.tv_sec), nanoseconds: Int64(time.tv_nsec))
    }
}

/// Clocks that move only when told to. Thread-safe. `advance` and `set` move both clocks
/// together, as time passing does; `stepWall` moves the wall clock alone, either way, as an
/// NTP step or an administrator does, while the monotonic clock never goes back. Each move
/// wakes whoever watches it (`watchSteps`): a loop fires the timers now due, a
/// `Doorbell.wait` whose (monotonic) timeout has passed returns, so a test steps time
/// instead of sleeping through it. Waits that do not watch (a socket read's deadline in
/// `HTTPClient`) still take real time.
public final class ManualClock: Clock {
    /// 2026-03-31T12:00:00Z, a Tuesday: the wall clock's start unless a test names one, so
    /// no test depends on today's date.
    public static let defaultWallStart = WallTime(unixSeconds: 1_774_958_400)

    private let state: Lock<(monotonic: Nanoseconds, wall: WallTime)>
    /// The eventfds of `watchSteps`, written after each move, and the thread of each.
    private let watchers = Lock<[Int32: Watcher]>([:])

    private struct Watcher {
        var thread: pthread_t
        var name: String
    }
    /// How many waits each thread (by name) has begun on this clock.
    private let waitsBegun = Lock<[String: Int]>([:])

    public init(start: Nanoseconds = 0, wall: WallTime = ManualClock.defaultWallStart) {
        state = Lock((start, wall))
    }

    public func now() -> Nanoseconds { state.withLock { $0.monotonic } }

    public func wall() -> WallTime { state.withLock { $0.wall } }

    /// Nil only when the process is out of descriptors; the waiter then waits real time.
    public func watchSteps() -> Int32? {
        let descriptor = cs_eventfd()
        guard descriptor >= 0 else { return nil }
        // Counted before the thread is seen as waiting (`advanceSettled`), so a step that
        // has settled finds every wait begun before it counted.
        let name = Self.threadName()
        waitsBegun.withLock { $0[name, default: 0] += 1 }
        watchers.withLock { $0[descriptor] = Watcher(thread: pthread_self(), name: name) }
        return descriptor
    }

    /// How many waits for a time (`watchSteps`) the threads named `name` have begun on
    /// this clock (a wait that a move wakes short of its deadline goes on: it is not a new
    /// one). A thread that is waiting for a time begins none until that time comes or it
    /// is woken; one that spins on a deadline already past begins one each time round.
    public func waitsBegun(onThreadsNamed name: String) -> Int { waitsBegun.withLock { $0[name, default: 0] } }

    /// How many of the threads named `name` wait for a time on this clock now.
    public func waiting(onThreadsNamed name: String) -> Int {
        watchers.withLock { $0.values.filter { $0.name == name }.count }
    }

    private static func threadName() -> String {
        var bytes = [CChar](repeating: 0, count: 16)
        guard cs_thread_name(&bytes, bytes.count) == 0 else { return "" }
        return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func stopWatchingSteps(_ descriptor: Int32) {
        // Under the lock: a move in progress never writes to a descriptor closed (and
        // perhaps reused) meanwhile.
        watchers.withLock { watchers in
            if watchers.removeValue(forKey: descriptor) != nil { _ = Glibc.close(descriptor) }
        }
    }

    /// How many waiters watch this clock's steps now: a test moves the clock once the
    /// thread it steps for is waiting.
    public var watcherCount: Int { watchers.withLock { $0.count } }

    /// Whether a waiter has yet to look at the clock's last move: once false after a move,
    /// every waiter still watching has woken and gone back to its wait.
    public var stepsPending: Bool {
        watchers.withLock { Self.anyPending($0.keys) }
    }

    private static func anyPending(_ descriptors: some Sequence<Int32>) -> Bool {
        descriptors.contains { descriptor in
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, 0) > 0
        }
    }

    private func stepped() {
        watchers.withLock { watchers in
            for descriptor in watchers.keys { _ = cs_eventfd_signal(descriptor) }
        }
    }

    /// Moves both clocks by `delta`, then waits (real time, up to `timeout`) until every
    /// thread that was waiting on this clock has taken the move in: it has looked, and it
    /// is waiting on the clock again, so what came due for it (a round of its own) is done.
    /// False when one had not by then. What a test checks did *not* happen in that time
    /// is then known not to. A loop takes a move in its next turn: ask the loop for a turn
    /// after this (`runSync`). A thread whose round itself waits on the clock (a probe with
    /// a deadline) counts as waiting again during that wait.
    public func advanceSettled(by delta: Nanoseconds, timeout: Nanoseconds = 10_000_000_000) -> Bool {
        let waiting = watchers.withLock { Self.counted($0.values.map(\.thread)) }
        advance(by: delta)
        let deadline = MonotonicTime.nanoseconds() + timeout
        while true {
            let settled = watchers.withLock { watchers in
                let now = Self.counted(watchers.values.map(\.thread))
                return waiting.allSatisfy { now[$0.key, default: 0] >= $0.value } && !Self.anyPending(watchers.keys)
            }
            if settled { return true }
            if MonotonicTime.nanoseconds() > deadline { return false }
            _ = poll(nil, 0, 1)
        }
    }

    private static func counted(_ threads: some Sequence<pthread_t>) -> [pthread_t: Int] {
        threads.reduce(into: [:]) { $0[$1, default: 0] += 1 }
    }

    /// Time passes: both clocks move by `delta`.
    public func advance(by delta: Nanoseconds) {
        state.withLock { state in
            state.monotonic += delta
            state.wall = state.wall.advanced(by: Int64(delta))
        }
        stepped()
    }

    /// Moves the monotonic clock to `instant`, which must not be earlier than now, and the
    /// wall clock by as much.
    public func set(_ instant: Nanoseconds) {
        state.withLock { state in
            precondition(instant >= state.monotonic, "ManualClock: monotonic time cannot go back")
            state.wall = state.wall.advanced(by: Int64(instant - state.monotonic))
            state.monotonic = instant
        }
        stepped()
    }

    /// Steps the wall clock alone by `delta` nanoseconds (negative: back); the monotonic
    /// clock does not move.
    public func stepWall(by delta: Int64) {
        state.withLock { $0.wall = $0.wall.advanced(by: delta) }
        stepped()
    }
}
