import Zoneinfo

/// Instants as the page reads and writes them.
enum Times {
    /// The first instant of the next local day after `instant` (a midnight the clock jumps
    /// over is the first hour that exists).
    static func nextMidnight(after instant: Int64, zone: ZoneRules) -> Int64 {
        midnight(of: instant, zone: zone, days: 1) ?? instant + 86_400
    }

    /// The first instant of the local day of `instant`.
    static func startOfDay(_ instant: Int64, zone: ZoneRules) -> Int64 {
        midnight(of: instant, zone: zone, days: 0) ?? instant - instant % 86_400
    }

    /// The first instant of the local day `days` after that of `instant`.
    private static func midnight(of instant: Int64, zone: ZoneRules, days: Int) -> Int64? {
        let today = zone.localDateTime(at: instant).daysSince1970
        let date = CivilCalendar.date(days: today + days)
        for hour in 0..<24 {
            let local = LocalDateTime(year: date.year, month: date.month, day: date.day, hour: hour)
            switch zone.resolve(local) {
            case .unique(let at), .ambiguous(let at, _): return at
            case .skipped: continue
            }
        }
        return nil
    }

    /// The next local `hour`:00 after `instant` (tomorrow's 06:00 at 22:00; today's at 05:00).
    static func next(hour: Int, after instant: Int64, zone: ZoneRules) -> Int64 {
        let local = zone.localDateTime(at: instant)
        for offset in 0...1 {
            let date = CivilCalendar.date(days: local.daysSince1970 + offset)
            let wanted = LocalDateTime(year: date.year, month: date.month, day: date.day, hour: hour)
            switch zone.resolve(wanted) {
            case .unique(let at), .ambiguous(let at, _): if at > instant { return at }
            case .skipped: continue
            }
        }
        return instant + 86_400
    }

    /// `2026-12-06T18:30:00Z`, `2026-12-06T19:30:00+01:00`, fractions allowed; nil otherwise.
    static func parseRFC3339(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[from..<(from + count)] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard bytes.count >= 20, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] | 0x20 == 0x74, bytes[13] == 0x3A,
            bytes[16] == 0x3A, let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        if index < bytes.count, bytes[index] == 0x2E {
            index += 1
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
        }
        guard index < bytes.count else { return nil }
        var offset = 0
        if bytes[index] | 0x20 == 0x7A {
            guard index + 1 == bytes.count else { return nil }
        } else {
            guard bytes[index] == 0x2B || bytes[index] == 0x2D, index + 6 == bytes.count, bytes[index + 3] == 0x3A,
                let hours = number(index + 1, 2), let minutes = number(index + 4, 2), hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 60 + minutes) * 60 * (bytes[index] == 0x2D ? -1 : 1)
        }
        let days = CivilCalendar.days(year: year, month: month, day: day)
        return Int64(days) * 86_400 + Int64(hour * 3_600 + minute * 60 + min(second, 59)) - Int64(offset)
    }

    /// `18:30` today, `Tue 18:30` within a week, else `2026-12-24 18:30`: the page's times.
    static func local(_ instant: Int64, now: Int64, zone: ZoneRules) -> String {
        let at = zone.localDateTime(at: instant)
        let today = zone.localDateTime(at: now).daysSince1970
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let time = "\(two(at.hour)):\(two(at.minute))"
        let days = at.daysSince1970 - today
        if days == 0 { return time }
        if days == 1 { return "tomorrow " + time }
        if days > 1, days < 7 {
            let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
            return names[at.weekday.rawValue - 1] + " " + time
        }
        return "\(at.year)-\(two(at.month))-\(two(at.day)) " + time
    }
}
