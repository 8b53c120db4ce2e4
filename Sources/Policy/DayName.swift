import Zoneinfo

/// English day names in any case, long or short (`monday`, `mon`, `Tue`, `tues`, `thurs`).
enum DayName {
    static func parse(_ text: String) -> Weekday? {
        switch text.policyTrimmed.lowercasedASCII {
        case "monday", "mon": return .monday
        case "tuesday", "tue", "tues": return .tuesday
        case "wednesday", "wed", "weds": return .wednesday
        case "thursday", "thu", "thur", "thurs": return .thursday
        case "friday", "fri": return .friday
        case "saturday", "sat": return .saturday
        case "sunday", "sun": return .sunday
        default: return nil
        }
    }
}

extension Weekday {
    /// The day before, wrapping Monday to Sunday.
    var previous: Weekday { Weekday(rawValue: rawValue == 1 ? 7 : rawValue - 1)! }

    var isWeekend: Bool { self == .saturday || self == .sunday }

    var shortName: String {
        switch self {
        case .monday: return "mon"
        case .tuesday: return "tue"
        case .wednesday: return "wed"
        case .thursday: return "thu"
        case .friday: return "fri"
        case .saturday: return "sat"
        case .sunday: return "sun"
        }
    }
}
