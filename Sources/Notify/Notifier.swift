import HTTPClient
import Locks
import Store
import Synchronization
import SystemIO

/// Delivers the parent's notifications (docs/requests-and-notifications.md#notifications)
/// on a thread of its own: whoever notices an event queues it in the store (`post`, from
/// the page's loop, the sync thread or this thread's own watch), and this thread sends
/// the queue oldest first, each event at least once. A receiver that fails or answers
/// anything but 2xx is tried again with a growing pause (2 s doubling to 5 min), the
/// queue meanwhile bounded by `notify_queue_max` (the oldest dropped and counted). A
/// restart loses nothing: what was not acknowledged is still in the store.
public final class Notifier: @unchecked Sendable {
    // Sendable: `failures` and `nextWatch` are touched only by the thread (or by a test
    // driving `runDue` instead of it); `post` goes through the store and the doorbell.
    public let target: NotifyTarget
    /// The events the parent wants (`notify_events`); others are never queued.
    public let events: Set<Notice.Kind>
    /// `notify_queue_max`.
    public let bound: Int
    private let store: Store
    private let client: HTTPClient
    private let clock: any Clock
    private let log: Logger
    /// Events found by looking (the gateway's trouble), every `watchInterval` seconds.
    private let watch: @Sendable (_ now: Int64) -> [Notice]
    private let watchInterval: Int64
    /// With a shared store (docs/two-gateways.md): claims an event that another gateway
    /// may find as well, and returns the gateway that claimed it first when that is
    /// another (which sends it); nil when this one sends it, or nobody could say.
    private let claimedElsewhere: (@Sendable (_ id: String, _ now: Int64) -> String?)?
    /// The events another gateway may find too: the same device, budget, attempts and day.
    static let sharedKinds: Set<Notice.Kind> = [.newDevice, .budgetSpent, .circumvention, .summary]
    private let doorbell: Doorbell
    private let stopping = Atomic<Bool>(false)
    private let hurry = Atomic<Bool>(false)
    private let roundStarted = Atomic<Int64>(0)
    /// Ids queued (or found queued) since the start: the watch finds the same trouble every
    /// 15 s, and the store's key would refuse it anyway, but not without a write.
    private let queued = Lock<Set<String>>([])
    private var thread: SystemThread?
    /// Failed deliveries in a row; none is tried before `resumeAt` (wall seconds).
    private var failures = 0
    private var resumeAt: Int64 = 0
    private var nextWatch: Int64 = 0
    private var nextPrune: Int64 = 0

    /// How long delivered events are kept, so an event made again within it is known.
    public static let keepSeconds: Int64 = 30 * 86_400

    public init(
        target: NotifyTarget, events: Set<Notice.Kind>, bound: Int, store: Store, client: HTTPClient,
        clock: any Clock, log: Logger, watchInterval: Int64 = 15,
        watch: @escaping @Sendable (Int64) -> [Notice] = { _ in [] },
        claimedElsewhere: (@Sendable (String, Int64) -> String?)? = nil
    ) throws(SystemError) {
        self.claimedElsewhere = claimedElsewhere
        self.target = target
        self.events = events
        self.bound = max(bound, 1)
        self.store = store
        self.client = client
        self.clock = clock
        self.log = log
        self.watch = watch
        self.watchInterval = max(watchInterval, 1)
        doorbell = try Doorbell()
        // A new start is a new chance: what waits is tried at once.
        try? store.noticesDueNow(clock.wall().unixSeconds)
    }

    /// Queues `notice` when the parent wants its kind (any thread but a DNS loop's: it
    /// writes to the store). An event whose id was queued before is ignored.
    public func post(_ notice: Notice) {
        guard events.contains(notice.event) else { return }
        let fresh = queued.withLock { ids in
            if ids.count > 10_000 { ids.removeAll() }
            return ids.insert(notice.id).inserted
        }
        guard fresh else { return }
        do {
            let isNew = try store.enqueueNotice(
                NoticeRow(key: notice.id, kind: notice.event.rawValue, createdAt: notice.time, body: notice.json()),
                bound: bound)
            if isNew { doorbell.ring() }
        } catch {
            // Not queued: the next finding tries again.
            _ = queued.withLock { $0.remove(notice.id) }
            log.error("notify_queue_failed", [("event", notice.event.rawValue), ("error", "\(error)")])
        }
    }

    /// SIGUSR1: the waiting events are tried now, whatever the pause.
    public func retryNow() {
        hurry.store(true, ordering: .releasing)
        doorbell.ring()
    }

    public func start() throws(SystemError) {
        // Not SCHED_IDLE like the sync: its deadlines (the receiver's, the shared store's
        // claim) are real time, and a thread starved behind busy loops would miss them; a
        // claim missed so is an event two gateways send. Its rounds are brief and rare.
        thread = try SystemThread.spawn(name: "pg-notify", priority: .normal) { [self] in loop() }
    }

    /// Stops the thread once the delivery in progress, if any, has returned.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        doorbell.ring()
        thread?.join()
        thread = nil
        client.closeIdleConnections()
    }

    /// The start (wall, unix seconds) of the last round that has finished: the watch, when
    /// due, and every event then due were done by then. 0 before the first.
    public var lastRound: Int64 { roundStarted.load(ordering: .acquiring) }

    private func loop() {
        while !stopping.load(ordering: .acquiring) {
            let started = clock.wall().unixSeconds
            let wakeAt = runDue()
            roundStarted.store(started, ordering: .releasing)
            let wait = max(0, wakeAt - clock.wall().unixSeconds)
            _ = try? doorbell.wait(timeout: Nanoseconds(min(wait, watchInterval)) * 1_000_000_000, clock: clock)
            doorbell.drain()
        }
    }

    /// One round: the watch when due, then every waiting event that is due, oldest first,
    /// until one fails. Returns when the next round is due (wall seconds).
    func runDue() -> Int64 {
        var now = clock.wall().unixSeconds
        if now >= nextWatch {
            for notice in watch(now) { post(notice) }
            nextWatch = now + watchInterval
        }
        if now >= nextPrune {
            try? store.pruneNotices(before: now - Self.keepSeconds)
            nextPrune = now + 3600
        }
        if hurry.exchange(false, ordering: .acquiring) { resumeAt = 0 }
        guard now >= resumeAt else { return min(resumeAt, nextWatch) }
        while !stopping.load(ordering: .acquiring) {
            let due: [NoticeRow]
            do { due = try store.dueNotices(now: now, limit: 20) } catch {
                log.error("notify_queue_failed", [("error", "\(error)")])
                return now + watchInterval
            }
            guard !due.isEmpty else { break }
            for row in due {
                guard !stopping.load(ordering: .acquiring) else { break }
                if let failure = deliver(row) {
                    failed(row, failure, now: clock.wall().unixSeconds)
                    return min(resumeAt, nextWatch)
                }
            }
            now = clock.wall().unixSeconds
        }
        let next = (try? store.nextNoticeDue()) ?? nil
        return min(next ?? nextWatch, nextWatch)
    }

    /// Sends one event; nil when the receiver took it (and it is marked sent), else why not.
    private func deliver(_ row: NoticeRow) -> String? {
        guard let notice = Notice(json: row.body) else {
            // Not one of ours (a store edited by hand): kept out of the way, said once.
            do { try store.markNoticeSent(id: row.id, now: clock.wall().unixSeconds) } catch {
                return "the store: \(error)"
            }
            log.warn("notify_unreadable", [("id", row.key)])
            return nil
        }
        if let claimedElsewhere, Self.sharedKinds.contains(notice.event),
            let holder = claimedElsewhere(notice.id, clock.wall().unixSeconds)
        {
            do { try store.markNoticeSent(id: row.id, now: clock.wall().unixSeconds) } catch {
                return "the store: \(error)"
            }
            log.info("notify_sent_elsewhere", [("event", row.kind), ("id", row.key), ("gateway", holder)])
            return nil
        }
        let response: HTTPResponse
        do { response = try client.send(target.request(for: notice)) } catch { return "\(error)" }
        guard (200..<300).contains(response.status) else {
            return "the receiver answered \(response.status) \(Notice.clean(response.reason, limit: 80))"
        }
        do { try store.markNoticeSent(id: row.id, now: clock.wall().unixSeconds) } catch {
            // Delivered but not marked: the round stops here rather than send it again at
            // once; after the pause it goes once more (at least once).
            log.error("notify_queue_failed", [("error", "\(error)")])
            return "the store: \(error)"
        }
        if failures > 0 {
            log.info("notify_delivered", [("after_failures", "\(failures)")])
            failures = 0
        }
        return nil
    }

    private func failed(_ row: NoticeRow, _ why: String, now: Int64) {
        failures += 1
        let pause = min(Int64(2) << min(failures - 1, 16), 300)
        resumeAt = now + pause
        try? store.noticeFailed(id: row.id, error: why, retryAt: resumeAt)
        // Said when a receiver goes away and every hour it stays away, not at each try.
        if failures == 1 || pause == 300 && failures % 12 == 0 {
            log.warn(
                "notify_failed",
                [("event", row.kind), ("error", why), ("retry_in", "\(pause)s"), ("url", target.url.authority)])
        }
    }
}
