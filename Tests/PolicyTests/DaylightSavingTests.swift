import DomainMatch
import Testing
import Zoneinfo

@testable import Policy

/// Decisions across a DST change, in two zones, through instants (not wall times).
@Suite struct DaylightSavingTests {
    static func instant(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) -> Int64 {
        Int64(CivilCalendar.days(year: year, month: month, day: day)) * 86_400 + Int64(hour * 3600 + minute * 60)
    }

    private func decide(
        _ zoneName: String, _ window: CompiledPolicy.DowntimeWindow, atUTC instant: Int64
    ) throws -> Reason {
        let zone = try ZoneRules.load(named: zoneName)
        let (engine, _) = Fixture.engine(zone: zone, policy: Fixture.policy(windows: [window]))
        return engine.decide(try QueryName.parse("example.org"), client: .anonymous, at: instant).reason
    }

    @Test func berlinSpringForward() throws {
        // Sunday 2026-03-29: 02:00 CET becomes 03:00 CEST at 01:00 UTC.
        let window = CompiledPolicy.DowntimeWindow(daysOfWeek: ["sun"], startTime: "01:30", endTime: "03:30")
        #expect(try decide("Europe/Berlin", window, atUTC: Self.instant(2026, 3, 29, 0, 29)) == .default, "01:29 CET")
        #expect(try decide("Europe/Berlin", window, atUTC: Self.instant(2026, 3, 29, 0, 45)) == .downtime, "01:45 CET")
        #expect(try decide("Europe/Berlin", window, atUTC: Self.instant(2026, 3, 29, 1, 15)) == .downtime, "03:15 CEST")
        #expect(try decide("Europe/Berlin", window, atUTC: Self.instant(2026, 3, 29, 1, 30)) == .default, "03:30 CEST")
        // Read in UTC, the same window falls elsewhere.
        #expect(try decide("UTC", window, atUTC: Self.instant(2026, 3, 29, 0, 45)) == .default)
        #expect(try decide("UTC", window, atUTC: Self.instant(2026, 3, 29, 1, 45)) == .downtime)
    }

    @Test func newYorkFallBack() throws {
        // Sunday 2026-11-01: 02:00 EDT becomes 01:00 EST at 06:00 UTC; 01:00–01:59 occurs twice.
        let window = CompiledPolicy.DowntimeWindow(daysOfWeek: ["Sunday"], startTime: "1:00", endTime: "1:30")
        #expect(
            try decide("America/New_York", window, atUTC: Self.instant(2026, 11, 1, 5, 15)) == .downtime, "01:15 EDT")
        #expect(
            try decide("America/New_York", window, atUTC: Self.instant(2026, 11, 1, 5, 45)) == .default, "01:45 EDT")
        #expect(
            try decide("America/New_York", window, atUTC: Self.instant(2026, 11, 1, 6, 15)) == .downtime, "01:15 EST")
        #expect(
            try decide("America/New_York", window, atUTC: Self.instant(2026, 11, 1, 6, 30)) == .default, "01:30 EST")
    }

    @Test func cutoffEndCountsWallClockNotElapsedTime() throws {
        let berlin = try ZoneRules.load(named: "Europe/Berlin")
        var notes = PolicyNotes()
        var screenTime = CompiledPolicy.ScreenTime()
        screenTime.downtimeWindows = [.init(daysOfWeek: ["sat"], startTime: "22:00", endTime: "06:00")]
        let rules = TimeRules.compile(screenTime, notes: &notes)
        // Saturday 23:00 CET → Sunday 06:00 CEST, seven hours later.
        let start = Self.instant(2026, 3, 28, 22, 0)
        #expect(rules.cutoffEnd(from: start, zone: berlin) == Self.instant(2026, 3, 29, 4, 0))
        #expect(rules.nextBoundary(after: start, zone: berlin) == Self.instant(2026, 3, 29, 4, 0))
        let newYork = try ZoneRules.load(named: "America/New_York")
        screenTime.downtimeWindows = [.init(daysOfWeek: ["sat"], startTime: "22:00", endTime: "06:00")]
        let fall = TimeRules.compile(screenTime, notes: &notes)
        // Saturday 2026-10-31 23:00 EDT → Sunday 06:00 EST, eight hours later.
        #expect(
            fall.cutoffEnd(from: Self.instant(2026, 11, 1, 3, 0), zone: newYork) == Self.instant(2026, 11, 1, 11, 0))
    }
}
