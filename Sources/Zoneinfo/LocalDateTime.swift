/// A wall-clock reading: a calendar date and a time of day, with no zone attached.
///
/// Fields are stored as given; `isValid` says whether they name a real date and time.
/// Ordering is chronological (field by field), which for valid values in one zone is
/// the order of the wall clock, not necessarily of the instants behind it.
public struct LocalDateTime: Equatable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// The ISO weekday of the date (out-of-range fields carry over as in `CivilCalendar.days`).
    public var weekday: Weekday {
        CivilCalendar.weekday(days: daysSince1970)
    }

    /// Days from 1970-01-01 to this date; handy for "yesterday" and "tomorrow".
    public var daysSince1970: Int {
        CivilCalendar.days(year: year, month: month, day: day)
    }

    /// Minutes since midnight: `hour * 60 + minute`.
    public var minuteOfDay: Int {
        hour * 60 + minute
    }

    /// True when month is 1...12, day exists in that month (leap years included),
    /// hour is 0...23 and minute and second are 0...59 (no leap second).
    public var isValid: Bool {
        (1...12).contains(month)
            && day >= 1 && day <= CivilCalendar.daysInMonth(year: year, month: month)
            && (0...23).contains(hour) && (0...59).contains(minute) && (0...59).contains(second)
    }

    /// ISO 8601 without zone, e.g. `2026-03-29T02:30:00`.
    public var description: String {
        let sign = year < 0 ? "-" : ""
        return sign + pad(year.magnitude, 4) + "-" + pad(month.magnitude, 2) + "-" + pad(day.magnitude, 2)
            + "T" + pad(hour.magnitude, 2) + ":" + pad(minute.magnitude, 2) + ":" + pad(second.magnitude, 2)
    }

    public static func < (a: LocalDateTime, b: LocalDateTime) -> Bool {
        (a.year, a.month, a.day, a.hour, a.minute, a.second)
            < (b.year, b.month, b.day, b.hour, b.minute, b.second)
    }

    /// The wall clock `seconds` after 1970-01-01T00:00:00 (i.e. UTC plus the offset).
    /// Total for every Int64: the day and the second of day are split before any sum.
    @usableFromInline
    init(secondsSince1970 seconds: Int64, plus offset: Int32 = 0) {
        var days = Int(floorDiv(seconds, 86_400))
        var secondOfDay = Int(floorMod(seconds, 86_400)) + Int(offset)
        days += floorDiv(secondOfDay, 86_400)
        secondOfDay = floorMod(secondOfDay, 86_400)
        let date = CivilCalendar.date(days: days)
        self.init(
            year: date.year, month: date.month, day: date.day,
            hour: secondOfDay / 3600, minute: secondOfDay / 60 % 60, second: secondOfDay % 60)
    }

    /// Years for which wall-clock seconds are computed; beyond them `secondsSince1970`
    /// is nil. A billion years each way keeps every sum far from Int64 overflow.
    static let supportedYears = -1_000_000_000...1_000_000_000

    /// Seconds from 1970-01-01T00:00:00 to this wall-clock reading, or nil when the
    /// value is invalid or its year is outside `supportedYears`.
    var secondsSince1970: Int64? {
        guard isValid, Self.supportedYears.contains(year) else { return nil }
        return Int64(daysSince1970) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }
}

private func pad(_ value: UInt, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}
