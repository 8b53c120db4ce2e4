import HTTPClient
import Store
import SystemIO
import TestSupport
import Testing

@testable import Sync

/// A parent's overrides reach the API as `parent_override` reports (docs/parent-page.md#overrides):
/// through the real HTTP client to the fake API, from the store's unreported rows, each
/// marked only after a 202; a dead or failing API keeps them for a later round and a
/// restart.
@Suite(.blocking) struct OverrideReporterTests {
    static let second: Nanoseconds = 1_000_000_000

    /// The fake API with one child, its device key, a store in `scratch`, and the sync
    /// service of profile `kid` on a manual clock.
    final class Fixture {
        let scratch: ScratchDirectory
        let api: FakePhosraAPI
        let clock = ManualClock(start: 1000 * OverrideReporterTests.second)
        let key: String
        let childID: String
        private(set) var store: Store
        private(set) var service: SyncService

        init() throws {
            scratch = try ScratchDirectory("pg-override-report")
            api = try FakePhosraAPI()
            childID = api.addChild(age: 10)
            var policy = FakePolicy.quickSetup(age: 10)
            policy.screenTime.schedule = nil
            _ = api.addPolicy(policy, to: childID)
            key = api.registerDevice(childID: childID).apiKey
            store = try Store.open(directory: scratch.path, now: clock.wall().unixSeconds)
            service = try Self.service(store: store, api: api, key: key, childID: childID, clock: clock)
        }

        /// What `run` does after a restart: the store opened again, a new service.
        func restart() throws {
            store.close()
            store = try Store.open(directory: scratch.path, now: clock.wall().unixSeconds)
            service = try Self.service(store: store, api: api, key: key, childID: childID, clock: clock)
        }

        static func service(
            store: Store, api: FakePhosraAPI, key: String, childID: String, clock: ManualClock
        ) throws -> SyncService {
            let client = HTTPClient(
                connectTimeout: .seconds(2), requestTimeout: .seconds(5), userAgent: "phosra-gate-test/1.0",
                clock: SystemClock())
            let http = PhosraHTTPAPI(base: try HTTPURL(api.baseURL), key: key, client: client)
            let profile = try ProfileSync(
                profile: "kid", childID: childID, api: http, store: store, timing: SyncSchedule.Timing(),
                now: SyncTime(clock), keepOnNoPolicy: true, apply: { _ in }, evaluate: { _, _ in [] },
                log: { _, _ in })
            return try SyncService(
                store: store, flusher: HitFlusher(aggregator: HitAggregator(), store: store, queueMax: 100),
                profiles: [profile], activity: [:], localVersions: [:], intervals: SyncService.Intervals(),
                heartbeat: { Heartbeat(pid: 1, startedAt: 0, updatedAt: 0, version: "test", listeners: []) },
                clock: clock, log: { _, _ in })
        }

        var now: Int64 { clock.wall().unixSeconds }

        /// The `parent_override` payloads the fake stored, in order.
        var overrideReports: [TestJSON] {
            api.reports.filter { $0.reportType == "parent_override" }.map(\.payload)
        }

        /// A round after a parent's change, a minute after the last so the budget has room.
        func reportRound() {
            clock.advance(by: 61 * OverrideReporterTests.second)
            _ = service.runDue(reportNow: true)
        }
    }

    @Test func eachSettingAndRemovalIsReportedOnceUnderTheProfilesKey() throws {
        let f = try Fixture()
        defer { f.store.close() }
        let start = f.now
        let pause = try f.store.addOverride(
            OverrideRow(profile: "kid", kind: "pause", startsAt: start, endsAt: nil, setBy: "page 192.168.1.20"))
        _ = try f.store.addOverride(
            OverrideRow(
                profile: "kid", kind: "exception", target: "example.org", startsAt: start, endsAt: start + 3600,
                setBy: "page 192.168.1.20"))
        _ = try f.store.addOverride(
            OverrideRow(profile: "teen", kind: "pause", startsAt: start, endsAt: nil, setBy: "page ::1"))
        f.reportRound()

        let first = f.overrideReports
        try #require(first.count == 2, "\(f.api.reports.map(\.reportType))")
        #expect(first[0]["override_id"]?.int == Int(pause.id))
        #expect(first[0]["profile"]?.string == "kid" && first[0]["kind"]?.string == "pause")
        #expect(first[0]["start"]?.string == ReportPayloads.timestamp(start))
        #expect(first[0]["end"]?.isNull == true, "until resumed")
        #expect(first[0]["set_by"]?.string == "page 192.168.1.20")
        #expect(first[0]["removed"]?.bool == false && first[0]["removed_at"] == nil)
        #expect(first[1]["name"]?.string == "example.org" && first[1]["app"] == nil)
        #expect(first[1]["end"]?.string == ReportPayloads.timestamp(start + 3600))
        let device = try #require(f.api.devices.first)
        #expect(
            f.api.reports.filter { $0.reportType == "parent_override" }.allSatisfy { $0.deviceID == device.id })
        #expect(try f.store.unreportedOverrides(profile: "kid", limit: 10).isEmpty)
        #expect(try f.store.unreportedOverrides(limit: 10).map(\.profile) == ["teen"], "no key of its own here")

        // A removal is a second report of the same override.
        _ = try f.store.removeOverride(id: pause.id, now: f.now, by: "page 192.168.1.21")
        f.reportRound()
        f.reportRound()
        let removal = try #require(f.overrideReports.dropFirst(2).first)
        #expect(f.overrideReports.count == 3, "sent once")
        #expect(removal["override_id"]?.int == Int(pause.id) && removal["removed"]?.bool == true)
        #expect(removal["removed_at"]?.string == ReportPayloads.timestamp(f.now - 122))
        #expect(removal["removed_by"]?.string == "page 192.168.1.21")
    }

    /// A device assigned or named on the page is a `parent_override` of kind `device`
    /// under the profile it is with, once; moved to another profile or back to the
    /// configuration, the profile it left is told (`removed`).
    @Test func aDevicesAssignmentIsReportedToItsProfileAndItsLeavingToTheOld() throws {
        let f = try Fixture()
        defer { f.store.close() }
        let mac = "aa:bb:cc:dd:ee:01"
        try f.store.saveDevice(mac: mac, name: "Mia's <tablet>", profile: "kid", now: f.now, by: "page 192.168.1.20")
        f.reportRound()
        f.reportRound()
        try #require(f.overrideReports.count == 1, "\(f.overrideReports)")
        let assigned = f.overrideReports[0]
        #expect(assigned["kind"]?.string == "device" && assigned["mac"]?.string == mac)
        #expect(assigned["name"]?.string == "Mia's <tablet>" && assigned["profile"]?.string == "kid")
        #expect(assigned["removed"]?.bool == false && assigned["set_by"]?.string == "page 192.168.1.20")

        // Renamed: told again. Then given to a profile with no key here: the one it left is told.
        try f.store.saveDevice(mac: mac, name: "Tablet", profile: nil, now: f.now, by: "page 192.168.1.20")
        f.reportRound()
        #expect(f.overrideReports.last?["name"]?.string == "Tablet" && f.overrideReports.count == 2)
        try f.store.saveDevice(mac: mac, name: nil, profile: "teen", now: f.now, by: "page 192.168.1.21")
        f.reportRound()
        f.reportRound()
        try #require(f.overrideReports.count == 3, "\(f.overrideReports)")
        #expect(f.overrideReports[2]["removed"]?.bool == true && f.overrideReports[2]["profile"]?.string == "kid")
        #expect(try f.store.unreportedDevices(profile: "kid").isEmpty)
        #expect(try f.store.unreportedDevices(profile: "teen").map(\.left) == [false], "waits for a key of its own")
        // A name alone, on a device of no profile: nothing to tell.
        try f.store.saveDevice(mac: "aa:bb:cc:dd:ee:02", name: "Console", profile: nil, now: f.now, by: "page")
        f.reportRound()
        #expect(f.overrideReports.count == 3)
    }

    @Test func aDeadAPIKeepsThemForTheNextRoundAndARestart() throws {
        let f = try Fixture()
        defer { f.store.close() }
        f.api.stop()
        let bonus = try f.store.addOverride(
            OverrideRow(
                profile: "kid", kind: "app_bonus", target: "tiktok", minutes: 15, day: 20_000, startsAt: f.now,
                endsAt: f.now + 3600, setBy: "page ::1"))
        f.reportRound()
        #expect(f.overrideReports.isEmpty)
        #expect(try f.store.unreportedOverrides(limit: 10).map(\.id) == [bonus.id])

        // Back, but answering 500: still kept.
        try f.api.start()
        f.api.injectFault(.serverError, on: .report, times: 5)
        f.reportRound()
        #expect(f.overrideReports.isEmpty)
        #expect(try f.store.unreportedOverrides(limit: 10).map(\.id) == [bonus.id])

        // After a restart, and the API well again, it goes out.
        try f.restart()
        for _ in 0..<5 where !f.api.pendingFaults(on: .report).isEmpty { f.reportRound() }
        f.reportRound()
        let sent = try #require(f.overrideReports.first)
        #expect(f.overrideReports.count == 1)
        #expect(sent["kind"]?.string == "app_bonus" && sent["app"]?.string == "tiktok")
        #expect(sent["minutes"]?.int == 15 && sent["name"] == nil)
        #expect(try f.store.unreportedOverrides(limit: 10).isEmpty)
    }
}
