import EventLoop
import Locks
import Policy
import Store
import SystemIO
import TestSupport
import Testing

@testable import Sync

/// The sync thread's round (`SyncService.runDue`) on a `ManualClock`: every interval runs
/// on the monotonic clock, so stepping the wall clock a day either way (NTP, a board that
/// booted in 1970) fires no poll or report early and starves none; the wall clock only
/// stamps what is stored.
@Suite(.blocking) struct SyncServiceClockTests {
    static let second: Nanoseconds = 1_000_000_000
    static let day: Int64 = 86_400 * 1_000_000_000

    /// A store, a recording API, one profile and the service, all on `clock`.
    struct Fixture {
        let scratch: ScratchDirectory
        let store: Store
        let api: RecordingAPI
        let clock: ManualClock
        let profile: ProfileSync
        let service: SyncService

        init(
            api: RecordingAPI = RecordingAPI(), clock: ManualClock = ManualClock(start: 1000 * second),
            timing: SyncSchedule.Timing = SyncSchedule.Timing(), report: Int64 = 60_000
        ) throws {
            scratch = try ScratchDirectory("pg-sync-clock")
            store = try Store.open(directory: scratch.path, now: clock.wall().unixSeconds)
            self.api = api
            self.clock = clock
            profile = try ProfileSync(
                profile: "default", childID: "c1", api: api, store: store, timing: timing,
                now: SyncTime(clock), keepOnNoPolicy: true, apply: { _ in },
                evaluate: { _, _ in [] }, log: { _, _ in })
            var intervals = SyncService.Intervals()
            intervals.report = report
            let store = self.store
            service = try SyncService(
                store: store, flusher: HitFlusher(aggregator: HitAggregator(), store: store, queueMax: 100),
                profiles: [profile], activity: [:], localVersions: [:], intervals: intervals,
                heartbeat: {
                    Heartbeat(
                        pid: 1, startedAt: 0, updatedAt: clock.wall().unixSeconds,
                        version: "test", listeners: [])
                },
                clock: clock, log: { _, _ in })
        }

        /// A blocked query of now (wall clock), queued for the next report.
        func queueHit() throws {
            let now = clock.wall().unixSeconds
            try store.enqueue(
                [
                    HitRow(
                        profile: "default", domain: "reddit.com", matched: "reddit.com",
                        reason: "blocked_domain:reddit.com", category: nil, client: "192.168.1.20",
                        source: "dns", count: 1, firstSeen: now, lastSeen: now, policyVersion: 1)
                ],
                maxRows: 100)
        }

        /// How long the service would sleep after this round (monotonic milliseconds).
        func round(force: Bool = false) -> Int64 {
            service.runDue(force: force) - SyncTime(clock).monotonic
        }

        /// How long until the profile's next request may go (monotonic milliseconds).
        var untilNextRequest: Int64 { profile.nextDue(now: SyncTime(clock)) - SyncTime(clock).monotonic }
    }

    @Test func aWallClockStepNeitherFiresNorStarvesAPoll() throws {
        var timing = SyncSchedule.Timing()
        timing.pollInterval = 120_000
        let f = try Fixture(timing: timing)
        _ = f.round()
        #expect(f.api.fetches == 1, "the unconditional fetch at start-up")

        f.clock.stepWall(by: Self.day)
        let sleep = f.round()
        #expect(f.api.fetches == 1, "a day forward on the wall clock is not two minutes of monotonic time")
        #expect(sleep > 0 && sleep <= 5000, "asleep until the next hit flush: \(sleep) ms")
        #expect(
            f.untilNextRequest >= 108_000 && f.untilNextRequest <= 132_000,
            "the poll in 120 s ± 10 %: \(f.untilNextRequest) ms")
        f.clock.advance(by: 100 * Self.second)
        _ = f.round()
        #expect(f.api.fetches == 1, "not due before 108 s")
        f.clock.advance(by: 33 * Self.second)
        _ = f.round()
        #expect(f.api.fetches == 2, "due by 132 s")

        f.clock.stepWall(by: -2 * Self.day)
        f.clock.advance(by: 133 * Self.second)
        _ = f.round()
        #expect(f.api.fetches == 3, "a day back on the wall clock does not hold the next poll back")
        let state = try #require(try f.store.syncState(profile: "default"))
        #expect(state.lastSyncAt == f.clock.wall().unixSeconds, "timestamps are wall-clock time, step included")
    }

    @Test func aWallClockStepNeitherFiresNorStarvesAReport() throws {
        let f = try Fixture(report: 60_000)
        try f.queueHit()
        _ = f.round()
        #expect(f.api.reports.isEmpty, "the first report is one interval after start")

        f.clock.stepWall(by: Self.day)
        _ = f.round()
        f.clock.advance(by: 59 * Self.second)
        _ = f.round()
        #expect(f.api.reports.isEmpty, "not before 60 s of monotonic time")
        f.clock.advance(by: Self.second)
        _ = f.round()
        #expect(f.api.reports.map(\.type) == ["blocked_attempt"])

        f.clock.stepWall(by: -2 * Self.day)
        try f.queueHit()
        f.clock.advance(by: 60 * Self.second)
        _ = f.round()
        #expect(f.api.reports.map(\.type) == ["blocked_attempt", "blocked_attempt"], "not starved by the step back")
        #expect(
            f.api.reports.last?.reportedAt == ReportPayloads.timestamp(f.clock.wall().unixSeconds),
            "reported_at is wall-clock time")
    }

    @Test func retryAfterHoldsEveryRequestForItsMonotonicLength() throws {
        let api = RecordingAPI()
        api.fetchResult = .rateLimited(retryAfter: 60)
        let f = try Fixture(api: api)
        _ = f.round()
        #expect(api.fetches == 1)
        api.fetchResult = .notModified
        f.clock.stepWall(by: Self.day)
        f.clock.advance(by: 59 * Self.second)
        _ = f.round(force: true)
        #expect(api.fetches == 1, "not even SIGUSR1 asks before Retry-After has passed")
        f.clock.advance(by: Self.second)
        _ = f.round()
        #expect(api.fetches == 2)
    }

    @Test func revokedOnlyAfterRevokeAfterOfMonotonicTime() throws {
        let api = RecordingAPI()
        api.fetchResult = .unauthorized
        var timing = SyncSchedule.Timing()
        timing.revokeAfter = 30 * 60_000
        let f = try Fixture(api: api, timing: timing)
        _ = f.round()
        f.clock.stepWall(by: Self.day)
        f.clock.advance(by: 60 * Self.second)
        _ = f.round(force: true)
        #expect(api.fetches == 2)
        #expect(
            try f.store.syncState(profile: "default")?.revoked == false, "a day on the wall clock is not 30 min of 401s"
        )
        f.clock.advance(by: 30 * 60 * Self.second)
        _ = f.round(force: true)
        let state = try #require(try f.store.syncState(profile: "default"))
        #expect(state.revoked)
        #expect(state.unauthorizedSince == f.clock.wall().unixSeconds - 31 * 60, "stored as the wall time it began")
    }

    /// Once the request budget (20 a minute) is spent, a round says to sleep until it
    /// refills instead of asking to run again at once (which would spin the thread).
    @Test func aSpentBudgetSleepsUntilItRefills() throws {
        var timing = SyncSchedule.Timing()
        timing.pollInterval = 1000  // a poll always due: only the budget holds it
        let f = try Fixture(timing: timing)
        for _ in 0..<20 {
            _ = f.round(force: true)
            f.clock.advance(by: 100_000_000)
        }
        #expect(f.api.fetches == 20)
        let sleep = f.round(force: true)
        #expect(f.api.fetches == 20, "the 21st request waits for the budget")
        #expect(sleep > 0, "the thread sleeps (\(sleep) ms) rather than run another round at once")
        #expect(
            f.untilNextRequest >= 58_000 && f.untilNextRequest <= 60_000,
            "until the first request of the minute ages out: \(f.untilNextRequest) ms")
    }
}

/// What the sync asked of the API, answering polls with `fetchResult` and accepting the rest.
final class RecordingAPI: PhosraAPIClient, @unchecked Sendable {
    // Sendable: everything it records is behind the `state` lock.
    struct Report: Equatable {
        let type: String
        /// `reported_at` as sent.
        let reportedAt: String?
    }

    private let state = Lock<(fetches: Int, reports: [Report], result: PolicyFetch)>((0, [], .notModified))

    var fetches: Int { state.withLock { $0.fetches } }
    var reports: [Report] { state.withLock { $0.reports } }
    var fetchResult: PolicyFetch {
        get { state.withLock { $0.result } }
        set { state.withLock { $0.result = newValue } }
    }

    func fetchPolicy(sinceVersion: Int?) -> PolicyFetch {
        state.withLock { state in
            state.fetches += 1
            return state.result
        }
    }

    func report(_ body: [UInt8]) -> APIResult {
        let text = String(decoding: body, as: UTF8.self)
        let type = Self.field("report_type", in: text) ?? "?"
        let stamp = Self.field("reported_at", in: text)
        state.withLock { $0.reports.append(Report(type: type, reportedAt: stamp)) }
        return .accepted
    }

    func ack(version: Int) -> APIResult { .accepted }

    /// The string value of `"name": "…"` in a JSON text.
    private static func field(_ name: String, in text: String) -> String? {
        guard let key = text.range(of: "\"\(name)\"") else { return nil }
        let parts = text[key.upperBound...].split(separator: "\"", maxSplits: 2, omittingEmptySubsequences: false)
        return parts.count == 3 ? String(parts[1]) : nil
    }
}
