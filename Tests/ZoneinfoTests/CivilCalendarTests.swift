import Testing
import Zoneinfo

@Suite struct CivilCalendarTests {
    @Test func epochAndKnownDates() {
        #expect(CivilCalendar.days(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilCalendar.days(year: 1969, month: 12, day: 31) == -1)
        #expect(CivilCalendar.days(year: 2000, month: 3, day: 1) == 11_017)
        #expect(CivilCalendar.days(year: 2026, month: 3, day: 29) == 20_541)
        #expect(CivilCalendar.days(year: 1600, month: 1, day: 1) == -135_140)
        #expect(CivilCalendar.days(year: 1, month: 1, day: 1) == -719_162)
        #expect(CivilCalendar.days(year: 9999, month: 12, day: 31) == 2_932_896)
        #expect(CivilCalendar.date(days: 20_541) == (2026, 3, 29))
        #expect(CivilCalendar.date(days: -719_162) == (1, 1, 1))
        #expect(CivilCalendar.date(days: -1) == (1969, 12, 31))
    }

    /// Walks day by day from 1970 back to 1599 and forward to 2401, counting with
    /// `daysInMonth` only, and checks both conversions against that independent count.
    @Test func agreesWithDayByDayCounting() {
        var (y, m, d, n) = (1970, 1, 1, 0)
        while y < 2401 {
            #expect(CivilCalendar.days(year: y, month: m, day: d) == n)
            #expect(CivilCalendar.date(days: n) == (y, m, d))
            d += 1
            n += 1
            if d > CivilCalendar.daysInMonth(year: y, month: m) {
                d = 1
                m += 1
            }
            if m > 12 {
                m = 1
                y += 1
            }
        }
        (y, m, d, n) = (1970, 1, 1, 0)
        while y >= 1599 {
            #expect(CivilCalendar.days(year: y, month: m, day: d) == n)
            #expect(CivilCalendar.date(days: n) == (y, m, d))
            d -= 1
            n -= 1
            if d == 0 {
                m -= 1
                if m == 0 {
                    m = 12
                    y -= 1
                }
                d = CivilCalendar.daysInMonth(year: y, month: m)
            }
        }
    }

    @Test func roundTripsFarFromTheEpoch() {
        for days in stride(from: -400_000_000_000, through: 400_000_000_000, by: 7_777_777_777) {
            let date = CivilCalendar.date(days: days)
            #expect(CivilCalendar.days(year: date.year, month: date.month, day: date.day) == days)
        }
        // Extremes must not trap.
        _ = CivilCalendar.date(days: Int.max)
        _ = CivilCalendar.date(days: Int.min)
        _ = CivilCalendar.weekday(days: Int.max)
        _ = CivilCalendar.weekday(days: Int.min)
    }

    @Test func outOfRangeFieldsCarryOver() {
        #expect(CivilCalendar.days(year: 2026, month: 13, day: 1) == CivilCalendar.days(year: 2027, month: 1, day: 1))
        #expect(CivilCalendar.days(year: 2026, month: 0, day: 1) == CivilCalendar.days(year: 2025, month: 12, day: 1))
        #expect(CivilCalendar.days(year: 2026, month: -11, day: 1) == CivilCalendar.days(year: 2025, month: 1, day: 1))
        #expect(CivilCalendar.days(year: 2026, month: 3, day: 0) == CivilCalendar.days(year: 2026, month: 2, day: 28))
        #expect(CivilCalendar.days(year: 2024, month: 1, day: 60) == CivilCalendar.days(year: 2024, month: 2, day: 29))
    }

    @Test func weekdays() {
        #expect(CivilCalendar.weekday(days: 0) == .thursday)
        #expect(CivilCalendar.weekday(days: -1) == .wednesday)
        #expect(CivilCalendar.weekday(days: 20_541) == .sunday)  // 2026-03-29
        #expect(CivilCalendar.weekday(days: -135_140) == .saturday)  // 1600-01-01
        #expect(CivilCalendar.weekday(days: -719_162) == .monday)  // 0001-01-01
        #expect(CivilCalendar.weekday(days: 2_932_896) == .friday)  // 9999-12-31
        // Consecutive days cycle through all seven in ISO order.
        for n in -20...20 {
            let today = CivilCalendar.weekday(days: n).rawValue
            let tomorrow = CivilCalendar.weekday(days: n + 1).rawValue
            #expect(tomorrow == today % 7 + 1)
        }
        #expect(Weekday.allCases.map(\.rawValue) == [1, 2, 3, 4, 5, 6, 7])
    }

    @Test func leapYearsAndMonthLengths() {
        #expect(CivilCalendar.isLeapYear(2000))
        #expect(CivilCalendar.isLeapYear(2024))
        #expect(!CivilCalendar.isLeapYear(1900))
        #expect(!CivilCalendar.isLeapYear(2100))
        #expect(!CivilCalendar.isLeapYear(2026))
        #expect(CivilCalendar.isLeapYear(-4))
        #expect(CivilCalendar.daysInMonth(year: 2024, month: 2) == 29)
        #expect(CivilCalendar.daysInMonth(year: 2100, month: 2) == 28)
        #expect(CivilCalendar.daysInMonth(year: 2026, month: 4) == 30)
        #expect(CivilCalendar.daysInMonth(year: 2026, month: 12) == 31)
        #expect(CivilCalendar.daysInMonth(year: 2026, month: 13) == 0)
    }
}
