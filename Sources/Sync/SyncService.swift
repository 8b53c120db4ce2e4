import EventLoop
import Glibc
import Policy
import Store
import Synchronization
import SystemIO

/// The sync thread (SPEC §7): flushes hits to the store at least every 5 s, writes `run`'s
/// heartbeat, polls the API for each registered profile, sends hit batches and the hourly
/// activity summary. One thread for all of it: the work is sequential and mostly waiting,
/// and blocking HTTP with deadlines keeps it simple. SIGUSR1 wakes it for a sync now.
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
    private let intervals: Intervals
    private let heartbeat: () -> Heartbeat
    private let log: (String, [(String, String)]) -> Void
    private var reporters: [String: HitReporter] = [:]
    private let doorbell: Doorbell
    private let stopping = Atomic<Bool>(false)
    private let forced = Atomic<Bool>(false)
    private var thread: SystemThread?
    /// The policy version each profile enforces when it is not synced (a local file).
    private let localVersions: [String: Int]

    public init(store: Store, flusher: HitFlusher, profiles: [ProfileSync], activity: [String: ActivityCounters],
                localVersions: [String: Int], intervals: Intervals, heartbeat: @escaping () -> Heartbeat,
                log: @escaping (String, [(String, String)]) -> Void) throws(SystemError) {
        self.store = store
        self.flusher = flusher
        self.profiles = profiles
        self.activity = activity
        self.localVersions = localVersions
        self.intervals = intervals
        self.heartbeat = heartbeat
        self.log = log
        doorbell = try Doorbell()
    }

    public func start() throws(SystemError) {
        thread = try SystemThread.spawn(name: "pg-sync") { [self] in loop() }
    }

    /// SIGUSR1: a sync now.
    public func wake() {
        forced.store(true, ordering: .releasing)
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
        var nextFlush = Self.now(), nextBeat = Self.now(), nextReport = Self.now() + intervals.report
        var nextPrune = Self.now()
        while !stopping.load(ordering: .acquiring) {
            let now = Self.now()
            if now >= nextFlush {
                flush(now)
                nextFlush = now + intervals.flush
            }
            if now >= nextPrune {
                _ = try? store.pruneHistory(before: (now - intervals.historyRetention) / 1000)
                nextPrune = now + 600_000
            }
            if now >= nextBeat {
                do { try store.writeHeartbeat(heartbeat()) } catch { log("store_failed", [("error", "\(error)")]) }
                nextBeat = now + intervals.heartbeat
            }
            let force = forced.exchange(false, ordering: .acquiring)
            for sync in profiles { sync.step(now: Self.now(), force: force) }
            if now >= nextReport || force {
                report(Self.now())
                nextReport = Self.now() + intervals.report
            }
            let current = Self.now()
            let wakeAt = ([nextFlush, nextBeat, nextReport] + profiles.map { $0.nextDue(now: current) }).min() ?? now + 1000
            let wait = max(0, wakeAt - Self.now())
            _ = try? doorbell.wait(timeout: Nanoseconds(wait) * 1_000_000, clock: MonotonicClock())
            doorbell.drain()
        }
        flush(Self.now())
    }

    private func flush(_ now: Int64) {
        var versions = localVersions
        for sync in profiles { versions[sync.profile] = sync.appliedVersion }
        do {
            let merged = try flusher.flush(activity: activity, versions: versions, now: now / 1000)
            if merged > 0 { log("hits_merged", [("rows", "\(merged)"), ("note", "hit_queue_max reached")]) }
        } catch {
            log("store_failed", [("error", "\(error)")])
        }
    }

    private func report(_ now: Int64) {
        for sync in profiles {
            var reporter = reporters[sync.profile] ?? HitReporter()
            reporter.send(for: sync, store: store, now: now, log: log)
            reporters[sync.profile] = reporter
            let hour = now / 1000 - now / 1000 % 3600
            for record in (try? store.unsentActivity(profile: sync.profile, before: hour)) ?? [] {
                guard sync.spendForReport(now) else { break }
                let body = ReportPayloads.webActivity(hourStart: record.hourStart, queries: record.queries,
                                                      byReason: record.blocksByReason, byCategory: record.blocksByCategory,
                                                      byEngine: record.rewritesByEngine, at: now / 1000)
                guard sync.send(body) == .accepted else { break }
                try? store.markActivitySent(profile: sync.profile, hourStart: record.hourStart)
            }
        }
    }

    /// Unix milliseconds.
    public static func now() -> Int64 {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        return Int64(wall.tv_sec) * 1000 + Int64(wall.tv_nsec) / 1_000_000
    }
}
