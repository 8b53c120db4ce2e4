import Policy
import Store
import Synchronization
import SystemIO

/// The sync thread (docs/sync.md): flushes hits to the store at least every 5 s, writes `run`'s
/// heartbeat, polls the API for each registered profile, sends hit batches and the hourly
/// activity summary. One thread for all of it: the work is sequential and mostly waiting,
/// and blocking HTTP with deadlines keeps it simple. SIGUSR1 wakes it for a sync now.
/// Every interval is paced on the monotonic clock and only timestamps come from the wall
/// clock (`SyncTime`), so a step of the wall clock fires nothing early and delays nothing.
public final class SyncService: @unchecked Sendable {
    // Sendable: everything mutable is touched only by the sync thread, except `wake` and
    // `stop`, which go through the doorbell and an atomic.
    public struct Intervals: Sendable {
        public var flush: Int64 = 5000
        public var heartbeat: Int64 = 5000
        public var report: Int64 = 60_000
        /// `hit_retention`: local history older than this is pruned (checked every 10 min).
        public var historyRetention: Int64 = 7 * 86_400_000
        public init() {}
    }

    private let store: Store
    private let flusher: HitFlusher
    private let profiles: [ProfileSync]
    private let activity: [String: ActivityCounters]
    private let usage: UsageSources
    private let intervals: Intervals
    private let heartbeat: () -> Heartbeat
    private let log: (String, [(String, String)]) -> Void
    private let clock: any Clock
    private var reporters: [String: HitReporter] = [:]
    /// When each periodic job is due next (monotonic milliseconds); sync thread only.
    private var nextFlush: Int64, nextBeat: Int64, nextReport: Int64, nextPrune: Int64
    private let doorbell: Doorbell
    private let stopping = Atomic<Bool>(false)
    private let forced = Atomic<Bool>(false)
    private let reportWanted = Atomic<Bool>(false)
    private var thread: SystemThread?
    /// The policy version each profile enforces when it is not synced (a local file).
    private let localVersions: [String: Int]
    /// Whether the store takes writes, shared with the profiles' syncs (for `/metrics`).
    public let storeHealth: StoreHealth

    public init(
        store: Store, flusher: HitFlusher, profiles: [ProfileSync], activity: [String: ActivityCounters],
        usage: UsageSources = .none, localVersions: [String: Int], intervals: Intervals,
        heartbeat: @escaping () -> Heartbeat, clock: any Clock, storeHealth: StoreHealth = StoreHealth(),
        log: @escaping (String, [(String, String)]) -> Void
    ) throws(SystemError) {
        self.store = store
        self.flusher = flusher
        self.profiles = profiles
        self.activity = activity
        self.usage = usage
        self.localVersions = localVersions
        self.intervals = intervals
        self.heartbeat = heartbeat
        self.clock = clock
        self.storeHealth = storeHealth
        // The profiles' syncs share `storeHealth` (their log goes through it too), so a
        // full disk is said once for all of them.
        self.log = storeHealth.filtering(log)
        let start = Int64(clock.now() / 1_000_000)
        (nextFlush, nextBeat, nextReport, nextPrune) = (start, start, start + intervals.report, start)
        doorbell = try Doorbell()
    }

    public func start() throws(SystemError) {
        thread = try SystemThread.spawn(name: "pg-sync", priority: .background) { [self] in loop() }
    }

    /// SIGUSR1: a sync now.
    public func wake() {
        forced.store(true, ordering: .releasing)
        doorbell.ring()
    }

    /// A parent changed an override: the reports go out now, without the polls of a `wake`.
    public func reportSoon() {
        reportWanted.store(true, ordering: .releasing)
        doorbell.ring()
    }

    /// Stops the thread after a last flush of hits into the store (SIGTERM).
    public func stop() {
        stopping.store(true, ordering: .releasing)
        doorbell.ring()
        thread?.join()
        thread = nil
    }

    private func loop() {
        while !stopping.load(ordering: .acquiring) {
            let wakeAt = runDue(
                force: forced.exchange(false, ordering: .acquiring),
                reportNow: reportWanted.exchange(false, ordering: .acquiring))
            let wait = max(0, wakeAt - SyncTime(clock).monotonic)
            _ = try? doorbell.wait(timeout: Nanoseconds(wait) * 1_000_000, clock: clock)
            doorbell.drain()
        }
        flush(SyncTime(clock))
    }

    /// One round of the sync thread: every job that is due now (the profiles' requests
    /// too when `force`, the reports when `reportNow`); returns when the next one is due (monotonic milliseconds). Apart
    /// from the thread so that tests drive it with a `ManualClock`.
    func runDue(force: Bool = false, reportNow: Bool = false) -> Int64 {
        let now = SyncTime(clock)
        if now.monotonic >= nextFlush {
            flush(now)
            nextFlush = now.monotonic + intervals.flush
        }
        if now.monotonic >= nextPrune {
            let cutoff = (now.wall - intervals.historyRetention) / 1000
            _ = try? store.pruneHistory(before: cutoff)
            _ = try? store.pruneSightings(before: cutoff)
            _ = try? store.pruneActivity(before: cutoff)
            _ = try? store.pruneDeadLetter(before: cutoff)
            _ = try? store.pruneServiceMinutes(before: usage.localDay(cutoff) - 1)
            nextPrune = now.monotonic + 600_000
        }
        if now.monotonic >= nextBeat {
            storeWrite { () throws(StoreError) in try store.writeHeartbeat(heartbeat()) }
            nextBeat = now.monotonic + intervals.heartbeat
        }
        // Requests take time (blocking HTTP), so each reads the clocks afresh.
        for sync in profiles { sync.step(now: SyncTime(clock), force: force) }
        if now.monotonic >= nextReport || force || reportNow {
            report(SyncTime(clock))
            nextReport = SyncTime(clock).monotonic + intervals.report
        }
        let current = SyncTime(clock)
        return ([nextFlush, nextBeat, nextReport] + profiles.map { $0.nextDue(now: current) }).min() ?? current
            .monotonic + 1000
    }

    private func flush(_ now: SyncTime) {
        var versions = localVersions
        for sync in profiles { versions[sync.profile] = sync.appliedVersion }
        storeWrite { () throws(StoreError) in
            let bounded = try flusher.flush(
                activity: activity, versions: versions, now: now.wallSeconds, usage: usage)
            if bounded.queueRows > 0 {
                log("hits_merged", [("rows", "\(bounded.queueRows)"), ("note", "hit_queue_max reached")])
            }
            if bounded.historyRows > 0 {
                log("hits_merged", [("rows", "\(bounded.historyRows)"), ("note", "hit_history_max reached")])
            }
        }
    }

    /// A write to the store. Its outcome is always said; `StoreHealth` in front of the log
    /// lets a failure through once when it begins and the recovery once when it ends.
    private func storeWrite(_ body: () throws(StoreError) -> Void) {
        do {
            try body()
            log("store_writable", [])
        } catch {
            log("store_failed", [("error", "\(error)"), ("note", "hits wait in memory until writes succeed")])
        }
    }

    private func report(_ now: SyncTime) {
        for sync in profiles {
            // First: a parent's few changes are not held behind a long queue of hits.
            OverrideReporter.send(for: sync, store: store, now: now, log: log)
            var reporter = reporters[sync.profile] ?? HitReporter()
            reporter.send(for: sync, store: store, now: now, log: log)
            reporters[sync.profile] = reporter
            let hour = now.wallSeconds - now.wallSeconds % 3600
            for record in (try? store.unsentActivity(profile: sync.profile, before: hour)) ?? [] {
                guard sync.spendForReport(now) else { break }
                let body = ReportPayloads.webActivity(
                    hourStart: record.hourStart, queries: record.queries,
                    byReason: record.blocksByReason, byCategory: record.blocksByCategory,
                    byEngine: record.rewritesByEngine, at: now.wallSeconds)
                guard sync.send(body) == .accepted else { break }
                try? store.markActivitySent(profile: sync.profile, hourStart: record.hourStart)
            }
            reportScreenTime(sync, now)
        }
    }

    /// Once a day per profile, after local midnight: the day's app minutes (docs/sync.md#screen-time).
    private func reportScreenTime(_ sync: ProfileSync, _ now: SyncTime) {
        guard usage.usage[sync.profile] != nil else { return }
        let today = usage.localDay(now.wallSeconds)
        for day in (try? store.unsentScreenTimeDays(profile: sync.profile, before: today)) ?? [] {
            guard let rows = try? store.serviceMinutes(day: day, profile: sync.profile), sync.spendForReport(now)
            else { break }
            let report = ScreenTimeReport(day: day, rows: rows, services: usage.services())
            guard sync.send(ReportPayloads.screenTime(report, at: now.wallSeconds)) == .accepted else { break }
            try? store.markScreenTimeSent(profile: sync.profile, day: day)
        }
    }
}
