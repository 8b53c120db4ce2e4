import Testing
import Zoneinfo

@Suite struct LocalDateTimeTests {
    @Test func description() {
        #expect(local(2026, 3, 29, 2, 30).description == "2026-03-29T02:30:00")
        #expect(local(5, 1, 2, 3, 4, 5).description == "0005-01-02T03:04:05")
        #expect(local(12345, 12, 31, 23, 59, 59).description == "12345-12-31T23:59:59")
        #expect(local(-44, 3, 15).description == "-0044-03-15T00:00:00")
    }

    @Test func validity() {
        #expect(local(2026, 3, 29, 2, 30).isValid)
        #expect(local(2024, 2, 29).isValid)
        #expect(local(2000, 2, 29).isValid)
        #expect(!local(2100, 2, 29).isValid)
        #expect(!local(2026, 2, 29).isValid)
        #expect(!local(2026, 4, 31).isValid)
        #expect(local(2026, 12, 31, 23, 59, 59).isValid)
        #expect(!local(2026, 0, 1).isValid)
        #expect(!local(2026, 13, 1).isValid)
        #expect(!local(2026, 1, 0).isValid)
        #expect(!local(2026, 1, 1, 24, 0).isValid)
        #expect(!local(2026, 1, 1, -1, 0).isValid)
        #expect(!local(2026, 1, 1, 0, 60).isValid)
        #expect(!local(2026, 1, 1, 0, 0, 60).isValid)
    }

    @Test func weekdayAndMinuteOfDay() {
        #expect(local(2026, 3, 29).weekday == .sunday)
        #expect(local(2026, 3, 30).weekday == .monday)
        #expect(local(1970, 1, 1).weekday == .thursday)
        #expect(local(2026, 1, 1, 23, 59).minuteOfDay == 1439)
        #expect(local(2026, 1, 1, 0, 0, 59).minuteOfDay == 0)
        #expect(local(2026, 1, 1, 7, 5).minuteOfDay == 425)
        #expect(local(2026, 3, 29).daysSince1970 == 20_541)
    }

    @Test func orderingAndHashing() {
        #expect(local(2026, 3, 29, 2, 30) < local(2026, 3, 29, 2, 31))
        #expect(local(2025, 12, 31, 23, 59, 59) < local(2026, 1, 1))
        #expect(!(local(2026, 1, 1) < local(2026, 1, 1)))
        #expect(Set([local(2026, 1, 1), local(2026, 1, 1), local(2026, 1, 2)]).count == 2)
    }
}
