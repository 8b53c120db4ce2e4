import EventLoop
import Glibc
import SystemIO

/// Timestamps as the Go server reads and writes them: RFC 3339 validation with the rules
/// of Go's `time.Time.UnmarshalJSON` (its strict RFC 3339 parser), and `RFC3339Nano`-style
/// output in UTC with trailing zeros of the fraction trimmed.
public enum FakeTime {
    /// Whether `text` is what Go's JSON decoder accepts as a time: `YYYY-MM-DDTHH:MM:SS`,
    /// an optional `.` and 1+ digits, then `Z` or `±HH:MM` (hour < 24, minute < 60); every
    /// field in range, the day valid for its month; uppercase `T` and `Z` only.
    public static func isRFC3339(_ text: String) -> Bool {
        let s = Array(text.utf8)
        guard s.count >= 20, s[4] == UInt8(ascii: "-"), s[7] == UInt8(ascii: "-"), s[10] == UInt8(ascii: "T"),
            s[13] == UInt8(ascii: ":"), s[16] == UInt8(ascii: ":"),
            let year = number(s, 0, 4), let month = number(s, 5, 2), (1...12).contains(month),
            let day = number(s, 8, 2), day >= 1, day <= daysIn(month: month, year: year),
            let hour = number(s, 11, 2), hour <= 23, let minute = number(s, 14, 2), minute <= 59,
            let second = number(s, 17, 2), second <= 59
        else { return false }
        var index = 19
        if index + 1 < s.count, s[index] == UInt8(ascii: "."), isDigit(s[index + 1]) {
            index += 1
            while index < s.count, isDigit(s[index]) { index += 1 }
        }
        let zone = s[index...]
        if zone.count == 1 { return zone.first == UInt8(ascii: "Z") }
        guard zone.count == 6, let sign = zone.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-"),
            s[index + 3] == UInt8(ascii: ":"),
            let offsetHours = number(s, index + 1, 2), offsetHours <= 23, let offsetMinutes = number(s, index + 4, 2),
            offsetMinutes <= 59
        else { return false }
        return true
    }

    /// Go's zero time, stored for a report without `reported_at`.
    public static let zero = "0001-01-01T00:00:00Z"

    /// Now on `clock`'s wall clock, in UTC, with `fractionDigits` digits of the second
    /// (0 = none), trailing zeros trimmed as Go's RFC3339Nano does.
    public static func now(fractionDigits: Int = 9, clock: any Clock = SystemClock()) -> String {
        let wall = clock.wall()
        return format(
            seconds: Int(wall.unixSeconds), nanoseconds: Int(wall.unixNanoseconds - wall.unixSeconds * 1_000_000_000),
            fractionDigits: fractionDigits)
    }

    /// Seconds since the Unix epoch on `clock`'s wall clock.
    public static func unixSeconds(clock: any Clock = SystemClock()) -> Int { Int(clock.wall().unixSeconds) }

    public static func format(seconds: Int, nanoseconds: Int, fractionDigits: Int) -> String {
        var clock = time_t(seconds)
        var parts = tm()
        gmtime_r(&clock, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var text =
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
        let digits = min(max(fractionDigits, 0), 9)
        if digits > 0 {
            var fraction = String(nanoseconds)
            fraction = String(repeating: "0", count: 9 - fraction.count) + fraction
            var kept = fraction.prefix(digits)
            while kept.last == "0" { kept.removeLast() }
            if !kept.isEmpty { text += "." + kept }
        }
        return text + "Z"
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        guard start + count <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[start..<start + count] {
            guard isDigit(byte) else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
