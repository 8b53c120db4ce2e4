import Testing
import Zoneinfo

@testable import Policy

/// Every time case of docs/decisions.md#time-rules, on the wall clock.
@Suite struct TimeRulesTests {
    typealias Window = CompiledPolicy.DowntimeWindow
    typealias Span = CompiledPolicy.Span

    private func rules(_ windows: [Window] = [], schedule: CompiledPolicy.Schedule? = nil) -> (TimeRules, PolicyNotes) {
        var notes = PolicyNotes()
        var screenTime = CompiledPolicy.ScreenTime()
        screenTime.downtimeWindows = windows
        screenTime.schedule = schedule
        return (TimeRules.compile(screenTime, notes: &notes), notes)
    }

    private func cutoff(_ rules: TimeRules, _ day: Weekday, _ hour: Int, _ minute: Int = 0) -> CutoffKind? {
        rules.cutoff(at: Fixture.at(day, hour, minute))
    }

    @Test func clockTimes() {
        #expect(ClockTime("7:05", role: .start)?.minutes == 425)
        #expect(ClockTime("07:05", role: .start)?.minutes == 425)
        #expect(ClockTime(" 23:59 ", role: .end)?.minutes == 1439)
        #expect(ClockTime("24:00", role: .end)?.minutes == 1440)
        #expect(ClockTime("24:00", role: .start) == nil)
        for bad in [
            "", "7", "7:5", "07:60", "25:00", "24:01", "007:00", "07:00:00", "7h00", "-1:00", "+7:00", "ab:cd", "12::0",
        ] {
            #expect(ClockTime(bad, role: .end) == nil, "\(bad)")
        }
    }

    @Test func windowAcrossMidnight() {
        let (time, _) = rules([Window(daysOfWeek: ["Mon"], startTime: "21:30", endTime: "06:30")])
        #expect(cutoff(time, .monday, 21, 29) == nil)
        #expect(cutoff(time, .monday, 21, 30) == .downtime)
        #expect(cutoff(time, .monday, 23, 59) == .downtime)
        #expect(cutoff(time, .tuesday, 0, 0) == .downtime, "began yesterday")
        #expect(cutoff(time, .tuesday, 6, 29) == .downtime)
        #expect(cutoff(time, .tuesday, 6, 30) == nil)
        #expect(cutoff(time, .monday, 5, 0) == nil, "Sunday is not a start day")
        #expect(cutoff(time, .tuesday, 22, 0) == nil, "Tuesday is not a start day")
    }

    @Test func endEqualToStartIsAWholeDay() {
        let (time, _) = rules([Window(daysOfWeek: ["wednesday"], startTime: "10:00", endTime: "10:00")])
        #expect(cutoff(time, .wednesday, 9, 59) == nil)
        #expect(cutoff(time, .wednesday, 10, 0) == .downtime)
        #expect(cutoff(time, .thursday, 9, 59) == .downtime)
        #expect(cutoff(time, .thursday, 10, 0) == nil)
    }

    @Test func endAt24() {
        let (time, _) = rules([Window(daysOfWeek: ["fri"], startTime: "20:00", endTime: "24:00")])
        #expect(cutoff(time, .friday, 23, 59) == .downtime)
        #expect(cutoff(time, .saturday, 0, 0) == nil)
        let (whole, _) = rules([Window(daysOfWeek: ["fri"], startTime: "00:00", endTime: "24:00")])
        #expect(cutoff(whole, .friday, 0, 0) == .downtime)
        #expect(cutoff(whole, .friday, 23, 59) == .downtime)
        #expect(cutoff(whole, .saturday, 0, 0) == nil)
    }

    @Test func emptyTimesAreTheWholeDay() {
        let (time, notes) = rules([Window(daysOfWeek: ["saturday", "SUNDAY"], startTime: "", endTime: " ")])
        #expect(cutoff(time, .saturday, 0, 0) == .downtime)
        #expect(cutoff(time, .sunday, 23, 59) == .downtime)
        #expect(cutoff(time, .monday, 0, 0) == nil)
        #expect(cutoff(time, .friday, 23, 59) == nil)
        #expect(notes == PolicyNotes())
    }

    @Test func oneEmptyTimeOrAnUnparsableOneVoidsTheWindow() {
        let (time, notes) = rules([
            Window(daysOfWeek: nil, startTime: "20:00", endTime: ""),
            Window(daysOfWeek: nil, startTime: "", endTime: "07:00"),
            Window(daysOfWeek: nil, startTime: "8pm", endTime: "07:00"),
            Window(daysOfWeek: nil, startTime: "24:00", endTime: "07:00"),
        ])
        #expect(time.windows.isEmpty)
        #expect(notes.voidWindows.count == 4)
        #expect(cutoff(time, .monday, 21) == nil)
    }

    @Test func unknownDayNamesAreSkippedAndReported() {
        let (time, notes) = rules([
            Window(daysOfWeek: ["Tues", "funday", "thurs"], startTime: "9:00", endTime: "10:00")
        ])
        #expect(cutoff(time, .tuesday, 9, 30) == .downtime)
        #expect(cutoff(time, .thursday, 9, 30) == .downtime)
        #expect(cutoff(time, .wednesday, 9, 30) == nil)
        #expect(notes.unknownDays.count == 1)
        let (none, _) = rules([Window(daysOfWeek: ["funday"], startTime: "9:00", endTime: "10:00")])
        #expect(cutoff(none, .monday, 9, 30) == nil, "a list of only unknown names covers no day")
    }

    @Test func absentOrEmptyDaysMeanEveryDay() {
        for days in [nil, [String]()] {
            let (time, _) = rules([Window(daysOfWeek: days, startTime: "12:00", endTime: "13:00")])
            for day in Weekday.allCases { #expect(cutoff(time, day, 12, 30) == .downtime) }
        }
    }

    @Test func scheduleLimitsEachHalfToItsDays() {
        let (time, _) = rules(
            schedule: .init(weekday: Span(start: "07:00", end: "21:00"), weekend: Span(start: "8:00", end: "22:00")))
        #expect(cutoff(time, .wednesday, 6, 59) == .schedule)
        #expect(cutoff(time, .wednesday, 7, 0) == nil)
        #expect(cutoff(time, .wednesday, 20, 59) == nil)
        #expect(cutoff(time, .wednesday, 21, 0) == .schedule)
        #expect(cutoff(time, .saturday, 7, 30) == .schedule)
        #expect(cutoff(time, .saturday, 21, 30) == nil)
        #expect(cutoff(time, .sunday, 22, 0) == .schedule)
    }

    @Test func wrappingWeekdayHalfSeenFromSaturdayAndMonday() {
        let (time, _) = rules(
            schedule: .init(weekday: Span(start: "18:00", end: "02:00"), weekend: Span(start: "08:00", end: "22:00")))
        #expect(cutoff(time, .saturday, 1, 0) == nil, "Friday's interval runs past midnight into Saturday")
        #expect(cutoff(time, .saturday, 2, 0) == .schedule)
        #expect(cutoff(time, .saturday, 9, 0) == nil)
        #expect(cutoff(time, .monday, 1, 0) == .schedule, "Sunday's weekend interval does not wrap")
        #expect(cutoff(time, .monday, 19, 0) == nil)
        #expect(cutoff(time, .tuesday, 1, 0) == nil, "Monday's interval wraps into Tuesday")
        #expect(cutoff(time, .tuesday, 12, 0) == .schedule)
    }

    @Test func wrappingWeekendHalfReachesMondayMorning() {
        let (time, _) = rules(
            schedule: .init(weekday: Span(start: "07:00", end: "21:00"), weekend: Span(start: "10:00", end: "01:00")))
        #expect(cutoff(time, .monday, 0, 30) == nil, "Sunday's interval runs into Monday")
        #expect(cutoff(time, .monday, 1, 0) == .schedule)
        #expect(cutoff(time, .saturday, 0, 30) == .schedule, "Friday's weekday interval does not wrap")
    }

    @Test func emptyHalfPlacesNoRestriction() {
        let (time, notes) = rules(schedule: .init(weekday: Span(start: "07:00", end: "21:00"), weekend: Span()))
        #expect(cutoff(time, .saturday, 3, 0) == nil)
        #expect(cutoff(time, .monday, 1, 0) == .schedule, "Sunday has no interval to run into Monday")
        #expect(notes == PolicyNotes())
    }

    @Test func unparsableHalfIsIgnoredAndReported() {
        let (time, notes) = rules(
            schedule: .init(weekday: Span(start: "07:00", end: "late"), weekend: Span(start: "", end: "20:00")))
        #expect(time.weekday == nil)
        #expect(time.weekend == nil)
        #expect(notes.ignoredHalves.count == 2)
        #expect(cutoff(time, .monday, 3, 0) == nil)
    }

    @Test func scheduleWithEqualEndsAllowsTheWholeDay() {
        let (time, _) = rules(
            schedule: .init(weekday: Span(start: "00:00", end: "00:00"), weekend: Span(start: "08:00", end: "24:00")))
        #expect(cutoff(time, .tuesday, 3, 0) == nil)
        #expect(cutoff(time, .sunday, 23, 59) == nil)
        #expect(cutoff(time, .sunday, 7, 59) == .schedule)
    }

    @Test func cutoffEndAndNextBoundary() {
        let (time, _) = rules([Window(daysOfWeek: ["mon"], startTime: "21:30", endTime: "06:30")])
        // Monday 2026-11-30 22:00 UTC.
        let monday22 = Int64(CivilCalendar.days(year: 2026, month: 11, day: 30)) * 86_400 + 22 * 3600
        let end = time.cutoffEnd(from: monday22, zone: .utc)
        #expect(end == monday22 + 8 * 3600 + 30 * 60)
        #expect(time.nextBoundary(after: monday22, zone: .utc) == end)
        let tuesdayNoon = monday22 + 14 * 3600
        #expect(time.cutoffEnd(from: tuesdayNoon, zone: .utc) == tuesdayNoon)
        #expect(
            time.nextBoundary(after: tuesdayNoon, zone: .utc) == monday22 + 7 * 86_400 - 30 * 60, "next Monday 21:30")
        let (always, _) = rules([Window(daysOfWeek: nil, startTime: "", endTime: "")])
        #expect(always.cutoffEnd(from: monday22, zone: .utc) == nil)
        #expect(TimeRules.none.nextBoundary(after: monday22, zone: .utc) == nil)
    }
}
