import Gateway
import Zoneinfo

/// Wall-clock times as people read them in one-line output.
enum LocalText {
    static func dayName(_ day: Weekday) -> String {
        ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][day.rawValue - 1]
    }

    /// `Tue 2026-03-31 06:30` (or with seconds).
    static func format(_ local: LocalDateTime, minutes: Bool = false) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var text =
            "\(dayName(local.weekday)) \(local.year)-\(two(local.month))-\(two(local.day)) \(two(local.hour)):\(two(local.minute))"
        if !minutes { text += ":\(two(local.second))" }
        return text
    }
}
