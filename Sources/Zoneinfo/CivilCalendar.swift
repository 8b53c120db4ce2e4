/// A day of the week, numbered as in ISO 8601 (Monday = 1 … Sunday = 7).
public enum Weekday: Int, Sendable, CaseIterable {
    case monday = 1
    case tuesday, wednesday, thursday, friday, saturday, sunday
}

/// Date arithmetic in the proleptic Gregorian calendar, counting days since 1970-01-01.
///
/// Every function is total over the years anyone will ask about (|year| < 10^15); the
/// arithmetic works in whole 400-year eras (146 097 days) so that negative days and
/// years before 1 AD need no special cases.
public enum CivilCalendar {
    /// Days in one 400-year Gregorian cycle.
    static let daysPerEra = 146_097
    /// Days from 0000-03-01 (the start of era 0, counted from March so leap days fall
    /// at the end of a year) to 1970-01-01.
    static let epochShift = 719_468

    /// Whether `year` has a 29 February.
    public static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// The number of days in `month` (1...12) of `year`; 0 for a month out of range.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 1, 3, 5, 7, 8, 10, 12: return 31
        case 4, 6, 9, 11: return 30
        case 2: return isLeapYear(year) ? 29 : 28
        default: return 0
        }
    }

    /// Days from 1970-01-01 to the given date (negative before it).
    ///
    /// Out-of-range fields carry over instead of failing, which keeps callers' date
    /// arithmetic simple: month 13 is January of the next year, day 0 is the last day
    /// of the previous month, day 32 of January is 1 February.
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = year + floorDiv(month - 1, 12)
        let m = floorMod(month - 1, 12) + 1
        // Count years from March so that February (and its leap day) ends the year.
        let marchYear = m <= 2 ? y - 1 : y
        let era = floorDiv(marchYear, 400)
        let yearOfEra = marchYear - era * 400  // 0...399
        let marchMonth = (m + 9) % 12  // March = 0 … February = 11
        let dayOfYear = (153 * marchMonth + 2) / 5 + day - 1  // month lengths 31,30,31,30,31 repeat
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * daysPerEra + dayOfEra - epochShift
    }

    /// The date `days` days after 1970-01-01. Inverse of `days(year:month:day:)` for valid dates.
    public static func date(days: Int) -> (year: Int, month: Int, day: Int) {
        // Split off whole eras first so that adding the epoch shift cannot overflow.
        let coarseEra = floorDiv(days, daysPerEra)
        let shifted = floorMod(days, daysPerEra) + epochShift
        let era = coarseEra + floorDiv(shifted, daysPerEra)
        let dayOfEra = floorMod(shifted, daysPerEra)  // 0...146096
        // The three correction terms undo the leap days of 4-, 100- and 400-year cycles.
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let marchMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * marchMonth + 2) / 5 + 1
        let month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// `YYYY-MM-DD` of the day `days` days after 1970-01-01.
    public static func isoDate(days: Int) -> String {
        let date = date(days: days)
        return String(LocalDateTime(year: date.year, month: date.month, day: date.day).description.prefix(10))
    }

    /// The weekday of the day `days` days after 1970-01-01 (which was a Thursday).
    public static func weekday(days: Int) -> Weekday {
        let mondayBased = floorMod(floorMod(days, 7) + 3, 7)  // 1970-01-01 → 3 (Thursday)
        return Weekday(rawValue: mondayBased + 1)!
    }

    /// The weekday of the given date, 0 = Sunday … 6 = Saturday, as POSIX TZ rules count.
    static func sundayBasedWeekday(days: Int) -> Int {
        weekday(days: days).rawValue % 7
    }
}

/// Division rounding toward negative infinity, so that the remainder is never negative.
@inline(__always)
func floorDiv<T: FixedWidthInteger & SignedInteger>(_ a: T, _ b: T) -> T {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}

/// The remainder of `floorDiv`: always in 0..<b for positive b.
@inline(__always)
func floorMod<T: FixedWidthInteger & SignedInteger>(_ a: T, _ b: T) -> T {
    let r = a % b
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r
}
