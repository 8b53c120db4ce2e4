import CSystem
import Glibc
import Locks
import Metrics
import Synchronization
import SystemIO

/// One thread's event loop on epoll: readiness of registered descriptors
/// (`EventLoop+Registrations.swift`), timers (`EventLoop+Timers.swift`) and tasks sent from
/// other threads (`EventLoop+Tasks.swift`); this file runs them. `run()` blocks its thread until `stop()`; the only place the
/// loop ever blocks is epoll_wait.
///
/// Threading contract: `execute`, `runSync`, `stop`, `inEventLoop` and `clock` may be used
/// from any thread. Everything else — register, setInterest, deregister, scheduleTimer,
/// cancelTimer — is confined to the loop's thread while `run()` is running (from inside
/// handlers, timers and tasks), or to whoever owns the loop while it is not running (set-up
/// before `run()`, tear-down after). Debug builds assert this on every such call; that
/// confinement is why the class can be `@unchecked Sendable`.
public final class EventLoop: @unchecked Sendable {
    public let clock: any Clock

    let epoll: Int32
    /// The thread inside `run()` (pthread_self), or 0 when the loop is not running.
    private let owner = Atomic<UInt>(0)
    private let stopping = Atomic<Bool>(false)
    let tasks: Lock<TaskQueue>
    let waker: Waker

    // Loop-confined state (see the type's contract).
    var registrations: [Registration?] = []
    var generation: UInt32 = 0
    /// `epoll_ctl` calls made so far: what a connection costs in them is checked by tests
    /// (every one is a system call on the connection's path). Loop thread.
    public internal(set) var controlCalls = 0
    private let events: UnsafeMutablePointer<cs_epoll_result>
    private let eventCapacity: Int32
    var timers = TimerHeap<TimerAction>()
    var runningTasks: [LoopTask] = []
    /// Where this loop's connections read before keeping only what arrived
    /// (`Socket.read(into:maxBytes:through:)`). Loop-confined.
    public let readScratch: UnsafeMutableRawBufferPointer
    /// How long each turn took: from epoll_wait's return to the next call, so the events,
    /// timers and tasks of one wake-up (docs/performance.md#loop-turns). Every query that
    /// arrived during a turn waited for the rest of it.
    public let turns = Histogram(bounds: EventLoop.turnBounds)
    /// The longest turn since the start, in nanoseconds.
    public let longestTurn = Atomic<UInt64>(0)

    /// From 10 µs (a few answers) to 10 ms (something that must never run on a loop).
    public static let turnBounds = [0.000_01, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002, 0.005, 0.01]

    struct Registration {
        let handler: any Selectable
        let generation: UInt32
        var interest: Interest
    }

    /// - Parameters:
    ///   - clock: where timers, and what runs on the loop, get the time: the daemon's one
    ///     clock, or a `ManualClock` in tests.
    ///   - eventCapacity: readiness reports taken per epoll_wait (at most 256).
    public init(clock: any Clock, eventCapacity: Int = 256) throws(SystemError) {
        self.clock = clock
        epoll = try systemCall("epoll_create1") { cs_epoll_create() }
        do {
            waker = try Waker()
        } catch {
            _ = Glibc.close(epoll)
            throw error
        }
        tasks = Lock(TaskQueue())
        self.eventCapacity = Int32(min(max(eventCapacity, 1), Int(CS_BATCH_MAX)))
        events = .allocate(capacity: Int(self.eventCapacity))
        readScratch = .allocate(byteCount: Self.readScratchBytes, alignment: 16)
        try register(waker.descriptor, interest: .read, handler: waker)
        if let steps = StepWatcher(clock: clock) { try register(steps.descriptor, interest: .read, handler: steps) }
    }

    /// One read: a DNS message and its length prefix.
    public static let readScratchBytes = 65_537

    deinit {
        readScratch.deallocate()
        events.deallocate()
        _ = Glibc.close(epoll)
    }

    /// True on the thread currently inside `run()`.
    public var inEventLoop: Bool { owner.load(ordering: .acquiring) == pthread_self() }

    /// Traps in debug builds when loop-confined state is touched from the wrong thread.
    @inline(__always)
    public func assertInLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(
            owner.load(ordering: .acquiring) == 0 || inEventLoop, "EventLoop used off its thread", file: file,
            line: line)
    }

    // MARK: Running

    /// Runs the loop on the calling thread until `stop()`; a loop runs once. On return the
    /// tasks queued before the stop have run, and every handler and pending timer has been
    /// released (so sockets still registered are closed by their owners' deinit).
    public func run() {
        let claimed = owner.compareExchange(expected: 0, desired: pthread_self(), ordering: .acquiringAndReleasing)
        precondition(claimed.exchanged, "EventLoop.run: already running on another thread")
        while !stopping.load(ordering: .acquiring) {
            let timeout = pollTimeout(now: clock.now())
            // Not through systemCall: after EINTR the timeout must be recomputed, not reused.
            let count = cs_epoll_wait(epoll, events, eventCapacity, timeout)
            if count < 0 {
                let code = errno
                // Only EBADF/EFAULT/EINVAL remain: a broken loop, nothing to recover.
                guard code == EINTR else { fatalError("EventLoop: \(SystemError("epoll_wait", errno: code))") }
                continue
            }
            let started = clock.now()
            dispatch(Int(count))
            fireDueTimers()
            runTasks()
            let took = clock.now() &- started
            turns.observe(nanoseconds: took)
            if took > longestTurn.load(ordering: .relaxed) { longestTurn.store(took, ordering: .relaxed) }
        }
        closeTaskQueue()
        // Swapped out, so handlers and timer closures are released after the stores: their
        // deinit may call back into the loop (deregister, cancelTimer) and must find it whole.
        var released: [Registration?] = []
        var releasedTimers = TimerHeap<TimerAction>()
        swap(&released, &registrations)
        swap(&releasedTimers, &timers)
        withExtendedLifetime((released, releasedTimers)) {}
        owner.store(0, ordering: .releasing)
    }

    /// Asks the loop to return from `run()` after its current iteration. Any thread; a
    /// loop stopped before it runs returns from `run()` at once.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        waker.wake()
    }

    private func dispatch(_ count: Int) {
        for index in 0..<count {
            let report = events[index]
            let descriptor = Int(truncatingIfNeeded: report.data & 0xFFFF_FFFF)
            let generation = UInt32(truncatingIfNeeded: report.data >> 32)
            if report.events & (CS_EPOLLIN | CS_EPOLLRDHUP) != 0,
                let handler = current(descriptor, generation, wanting: .read)
            {
                handler.readable()
            }
            if report.events & CS_EPOLLOUT != 0, let handler = current(descriptor, generation, wanting: .write) {
                handler.writable()
            }
            if report.events & (CS_EPOLLERR | CS_EPOLLHUP) != 0,
                let handler = current(descriptor, generation, wanting: .none)
            {
                handler.hangup()
            }
        }
    }

    /// The handler if the registration that produced an event is still the current one.
    @inline(__always)
    private func current(_ descriptor: Int, _ generation: UInt32, wanting interest: Interest) -> (any Selectable)? {
        guard descriptor < registrations.count, let registration = registrations[descriptor],
            registration.generation == generation, registration.interest.isSuperset(of: interest)
        else { return nil }
        return registration.handler
    }
}
