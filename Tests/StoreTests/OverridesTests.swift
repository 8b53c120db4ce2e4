import TestSupport
import Testing

@testable import Store

/// The parent's overrides and devices as rows (docs/parent-page.md#overrides): kept across
/// a reopen, live until they end or are removed, each sent to the API once.
@Suite(.blocking) struct OverridesTests {
    static func pause(_ profile: String = "kid", at start: Int64 = testNow, minutes: Int64? = 30) -> OverrideRow {
        OverrideRow(
            profile: profile, kind: "pause", startsAt: start, endsAt: minutes.map { start + $0 * 60 },
            setBy: "page 192.168.1.20")
    }

    @Test func anOverrideIsLiveUntilItEndsAndSurvivesAReopen() throws {
        let fixture = try StoreFixture()
        let pause = try fixture.store.addOverride(Self.pause())
        let bonus = try fixture.store.addOverride(
            OverrideRow(
                profile: "kid", kind: "app_bonus", target: "tiktok", minutes: 15, day: 20_000, startsAt: testNow,
                endsAt: testNow + 3_600, setBy: "page ::1"))
        let open = try fixture.store.addOverride(Self.pause("teen", minutes: nil))
        #expect(pause.id > 0 && bonus.id > pause.id && open.id > bonus.id)
        #expect(try fixture.store.liveOverrides(now: testNow) == [pause, bonus, open])
        // The pause ends after 30 minutes; the open one never does.
        #expect(try fixture.store.liveOverrides(now: testNow + 30 * 60) == [bonus, open])
        #expect(try fixture.store.liveOverrides(now: testNow + 86_400 * 365) == [open])
        fixture.store.close()
        let reopened = try fixture.reopen()
        #expect(try reopened.liveOverrides(now: testNow) == [pause, bonus, open])
    }

    @Test func removingEndsItOnceAndAResumeEndsEveryPauseOfTheProfile() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let first = try store.addOverride(Self.pause())
        let second = try store.addOverride(Self.pause(minutes: nil))
        let other = try store.addOverride(Self.pause("teen"))
        let removed = try #require(try store.removeOverride(id: first.id, now: testNow + 60, by: "page ::1"))
        #expect(removed.removedAt == testNow + 60 && removed.removedBy == "page ::1")
        #expect(try store.removeOverride(id: first.id, now: testNow + 61, by: "page ::1") == nil, "already removed")
        #expect(try store.removeOverride(id: 9_999, now: testNow, by: "page ::1") == nil, "never made")
        #expect(try store.removeOverride(id: other.id, now: testNow + 3_600, by: "page ::1") == nil, "ended")
        #expect(try store.endOverrides(profile: "kid", kind: "pause", now: testNow + 120, by: "page ::1") == 1)
        #expect(try store.liveOverrides(now: testNow + 120) == [other])
        #expect(second.id > first.id)
    }

    @Test func eachChangeIsReportedOnce() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let set = try store.addOverride(Self.pause())
        #expect(try store.unreportedOverrides(limit: 10).map(\.id) == [set.id])
        #expect(try store.unreportedOverrides(profile: "teen", limit: 10).isEmpty)
        try store.markOverridesReported([set])
        #expect(try store.unreportedOverrides(limit: 10).isEmpty)
        // Its removal is news again, with who removed it.
        _ = try store.removeOverride(id: set.id, now: testNow + 5, by: "page ::1")
        let again = try store.unreportedOverrides(profile: "kid", limit: 10)
        #expect(again.map(\.removedBy) == ["page ::1"])
    }

    @Test func aRemovalStoredWhileTheSettingWasSentStaysUnreported() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let sent = try store.addOverride(Self.pause())
        _ = try store.removeOverride(id: sent.id, now: testNow + 5, by: "page ::1")
        try store.markOverridesReported([sent])
        #expect(try store.unreportedOverrides(limit: 10).map(\.removedAt) == [testNow + 5])
    }

    @Test func aDeviceIsNamedAndAssignedAndANilFieldKeepsWhatWasStored() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let mac = "aa:bb:cc:dd:ee:01"
        try store.saveDevice(mac: mac, name: "Mia's <iPad>", profile: "kid", now: testNow, by: "page ::1")
        try store.saveDevice(mac: mac, name: nil, profile: "teen", now: testNow + 1, by: "page ::1")
        #expect(
            try store.devices() == [
                DeviceRow(
                    mac: mac, name: "Mia's <iPad>", profile: "teen", changedAt: testNow + 1, changedBy: "page ::1")
            ])
        // Empty clears a field: back to the configuration's choice.
        try store.saveDevice(mac: mac, name: "", profile: "", now: testNow + 2, by: "page ::1")
        #expect(try store.devices().first.map { [$0.name, $0.profile] } == [nil, nil])
        fixture.store.close()
        #expect(try fixture.reopen().devices().count == 1)
    }
}

/// A child's day for the page's chart: hours from the hourly activity, blocks summed by
/// reason and category, whatever the number of hits behind them.
@Suite(.blocking) struct DayChartRowsTests {
    @Test func hoursAndTotalsComeFromTheHourlyCounts() throws {
        let fixture = try StoreFixture()
        let hour = testNow - testNow % 3_600
        try fixture.store.addActivity(
            profile: "kid", hourStart: hour, queries: 40, blocksByReason: ["category": 3, "blocked_domain": 2],
            blocksByCategory: ["adult": 3])
        try fixture.store.addActivity(profile: "kid", hourStart: hour, queries: 10, blocksByReason: ["category": 1])
        try fixture.store.addActivity(profile: "kid", hourStart: hour - 7_200, queries: 5)
        try fixture.store.addActivity(profile: "teen", hourStart: hour, queries: 99, blocksByReason: ["paused": 9])
        #expect(
            try fixture.store.hours(profile: "kid", from: hour - 86_400, to: hour + 3_600) == [
                DayHour(hourStart: hour - 7_200, queries: 5, blocks: 0),
                DayHour(hourStart: hour, queries: 50, blocks: 6),
            ])
        #expect(try fixture.store.hours(profile: "kid", from: hour - 3_600, to: hour) == [])
        // The card's "today": the hours from that of the given instant on.
        #expect(try fixture.store.dayCounts(profile: "kid", since: hour - 7_200 + 60) == (55, 6))
        #expect(try fixture.store.dayCounts(profile: "kid", since: hour + 60) == (50, 6))
        let totals = try fixture.store.blockTotals(profile: "kid", from: hour - 86_400)
        #expect(totals.byReason.map(\.name) == ["category", "blocked_domain"])
        #expect(totals.byReason.map(\.count) == [4, 2])
        #expect(totals.byCategory.map(\.name) == ["adult"] && totals.byCategory.map(\.count) == [3])
    }

    /// A week of hits is hundreds of thousands of rows: the page's newest 50 must come
    /// from the end of an index on (profile, last_seen), not from a sort of the profile's
    /// rows, whatever statistics the planner has.
    @Test func theBlockHistoryIsReadFromItsIndex() throws {
        let fixture = try StoreFixture()
        let plan = try fixture.store.testRows("EXPLAIN QUERY PLAN " + Store.historyQuery) { $0.text(3) }
        #expect(plan.contains { $0.contains("USING INDEX hit_history_profile_last_seen") }, "\(plan)")
    }
}
