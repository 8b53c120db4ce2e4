/// A wall-clock time of day from a policy: `H:MM` or `HH:MM` from 00:00 to 23:59, or
/// `24:00` as an end only (docs/decisions.md#time-rules). Stored as minutes since midnight.
public struct ClockTime: Equatable, Sendable, CustomStringConvertible {
    public static let minutesPerDay = 24 * 60
    public let minutes: Int

    public init(minutes: Int) { self.minutes = minutes }

    public enum Role: Sendable { case start, end }

    /// Nil when the text is not a time, or `24:00` used as a start. Surrounding white
    /// space is ignored; an empty string is not a time (callers treat empty separately).
    public init?(_ text: String, role: Role) {
        let bytes = Array(text.policyTrimmed.utf8)
        guard bytes.count == 4 || bytes.count == 5, bytes[bytes.count - 3] == UInt8(ascii: ":") else { return nil }
        guard bytes.allSatisfy({ $0 == UInt8(ascii: ":") || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) })
        else { return nil }
        func number(_ slice: ArraySlice<UInt8>) -> Int { slice.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } }
        let hour = number(bytes[0..<(bytes.count - 3)])
        let minute = number(bytes[(bytes.count - 2)...])
        guard bytes.filter({ $0 == UInt8(ascii: ":") }).count == 1, minute < 60 else { return nil }
        if hour == 24 && minute == 0 && role == .end {
            self.minutes = ClockTime.minutesPerDay
            return
        }
        guard hour < 24 else { return nil }
        self.minutes = hour * 60 + minute
    }

    public var description: String {
        let text = "\(minutes / 60):" + (minutes % 60 < 10 ? "0" : "") + "\(minutes % 60)"
        return minutes / 60 < 10 ? "0" + text : text
    }
}

/// An interval that starts at a time of day and lasts `length` minutes (1...1440),
/// possibly running past midnight. Length is `(end − start) mod 24 h`, where 0 means a
/// whole day, so `end <= start` wraps (docs/decisions.md#time-rules).
public struct DailyInterval: Equatable, Sendable, CustomStringConvertible {
    public let start: Int
    public let length: Int

    public init(start: ClockTime, end: ClockTime) {
        self.start = start.minutes
        let length = (end.minutes - start.minutes + ClockTime.minutesPerDay) % ClockTime.minutesPerDay
        self.length = length == 0 ? ClockTime.minutesPerDay : length
    }

    public static let wholeDay = DailyInterval(start: ClockTime(minutes: 0), end: ClockTime(minutes: 0))

    /// Whether minute-of-day `minute` lies in the part of this interval that begins on
    /// the same day.
    public func containsToday(_ minute: Int) -> Bool { minute >= start && minute < start + length }

    /// Whether `minute` lies in the part that ran past midnight from the day before.
    public func containsFromYesterday(_ minute: Int) -> Bool { minute + ClockTime.minutesPerDay < start + length }

    public var end: Int { (start + length) % ClockTime.minutesPerDay }

    public var description: String {
        "\(ClockTime(minutes: start))–\(length == ClockTime.minutesPerDay && start == 0 ? "24:00" : ClockTime(minutes: end).description)"
    }
}
