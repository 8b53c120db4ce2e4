/// Evaluating a POSIX TZ rule at instants.
///
/// Each rule year `y` has two changes, "start" (std → dst) and "end" (dst → std). The
/// local time at an instant is decided by the latest change at or before it. Changes are
/// ordered by (instant, rule year, start before end), which gives the cases POSIX leaves
/// implicit their RFC 8536 meaning: when one year's end coincides with the next year's
/// start, daylight time stays in force all year (`EST5EDT4,0/0,J365/25`); a start and
/// end at the same instant of one year mean no daylight time. Southern-hemisphere rules
/// (start late in the year, end early) need no special case.
extension PosixTZ {
    /// A change of the rule at `instant`; `isStart` means daylight time begins.
    private struct Event {
        let instant: Int64
        let year: Int
        let isStart: Bool

        func precedes(_ other: Event) -> Bool {
            (instant, year, isStart ? 0 : 1) < (other.instant, other.year, other.isStart ? 0 : 1)
        }
    }

    /// The zone (std or dst) in force at `instant`.
    func zone(at instant: Int64) -> Zone {
        isDaylight(at: instant) ? daylight!.zone : standard
    }

    /// Whether daylight time is in force at `instant`. No allocation.
    func isDaylight(at instant: Int64) -> Bool {
        guard let daylight else { return false }
        let year = Self.year(of: instant)
        var latest: Event?
        func consider(_ event: Event) {
            if event.instant <= instant, latest.map({ $0.precedes(event) }) ?? true { latest = event }
        }
        // A change lies within 167 h + 25 h (< 10 days) of its rule year, so no change of
        // a year after year+1 precedes `instant`, and years year-2 and year-1 always hold
        // a change at or before it that is later than every change of year-3.
        for y in (year - 2)...(year + 1) {
            let (start, end) = events(year: y, daylight)
            consider(start)
            consider(end)
        }
        return latest?.isStart ?? false
    }

    /// The first instant in `(instant, limit]` at which the UTC offset changes, if any.
    func nextChange(after instant: Int64, notAfter limit: Int64) -> Int64? {
        guard let daylight, daylight.zone.offset != standard.offset, limit > instant else { return nil }
        let first = Self.year(of: instant)
        let last = min(Self.year(of: limit), first + 60)
        // A short window finds the next change of any ordinary rule; only rules that never
        // change (daylight time all year) need the whole range.
        var end = min(first + 2, last)
        while true {
            if let change = firstChange(years: (first - 1)...(end + 1), after: instant, daylight) {
                // Changes of years after end + 1 come after 1 January of end + 1, so a
                // change before then is certainly the first.
                if change <= Self.startOfYear(end + 1) || end == last {
                    return change <= limit ? change : nil
                }
            }
            if end == last { return nil }
            end = last
        }
    }

    private func firstChange(years: ClosedRange<Int>, after instant: Int64, _ daylight: Daylight) -> Int64? {
        var all: [Event] = []
        all.reserveCapacity(2 * years.count)
        for y in years {
            let (start, end) = events(year: y, daylight)
            all.append(start)
            all.append(end)
        }
        all.sort { $0.precedes($1) }
        var current = isDaylight(at: instant)
        var i = all.startIndex
        while i < all.endIndex {
            // All changes at one instant act together; the last in order wins.
            var j = i
            while j + 1 < all.endIndex && all[j + 1].instant == all[i].instant { j += 1 }
            if all[j].instant > instant && all[j].isStart != current { return all[j].instant }
            if all[j].instant > instant { current = all[j].isStart }
            i = j + 1
        }
        return nil
    }

    private func events(year: Int, _ daylight: Daylight) -> (start: Event, end: Event) {
        (
            Event(instant: utc(of: daylight.start, year: year, before: standard.offset), year: year, isStart: true),
            Event(instant: utc(of: daylight.end, year: year, before: daylight.zone.offset), year: year, isStart: false)
        )
    }

    /// The instant of `change` in `year`, whose time is read on the clock of `offset`.
    private func utc(of change: Change, year: Int, before offset: Int32) -> Int64 {
        Int64(Self.dayNumber(change.day, year: year)) * 86_400 + Int64(change.time) - Int64(offset)
    }

    /// Days since 1970-01-01 of the change day in `year`.
    static func dayNumber(_ day: Day, year: Int) -> Int {
        let january1 = CivilCalendar.days(year: year, month: 1, day: 1)
        switch day {
        case .julianNoLeap(let n):
            return january1 + n - 1 + (n >= 60 && CivilCalendar.isLeapYear(year) ? 1 : 0)
        case .zeroBased(let n):
            return january1 + n
        case .monthWeek(let month, let week, let weekday):
            let first = CivilCalendar.days(year: year, month: month, day: 1)
            let firstMatch = first + floorMod(weekday - CivilCalendar.sundayBasedWeekday(days: first), 7)
            var day = firstMatch + 7 * (week - 1)
            let length = CivilCalendar.daysInMonth(year: year, month: month)
            while day >= first + length { day -= 7 }  // week 5 means the last one
            return day
        }
    }

    /// The UTC calendar year of `instant`, clamped so that rule arithmetic cannot overflow.
    static func year(of instant: Int64) -> Int {
        let year = CivilCalendar.date(days: Int(floorDiv(instant, 86_400))).year
        return min(max(year, LocalDateTime.supportedYears.lowerBound), LocalDateTime.supportedYears.upperBound)
    }

    private static func startOfYear(_ year: Int) -> Int64 {
        Int64(CivilCalendar.days(year: year, month: 1, day: 1)) * 86_400
    }
}
