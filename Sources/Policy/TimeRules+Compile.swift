import Zoneinfo

extension TimeRules {
    /// Builds the time rules of a policy (docs/decisions.md#time-rules), noting what was void or ignored.
    public static func compile(_ screenTime: CompiledPolicy.ScreenTime, notes: inout PolicyNotes) -> TimeRules {
        var windows: [Window] = []
        for (index, raw) in screenTime.downtimeWindows.enumerated() {
            let label = "window \(index + 1)"
            var days = Set(Weekday.allCases)
            if let names = raw.daysOfWeek, !names.isEmpty {
                days = []
                for name in names {
                    if let day = DayName.parse(name) {
                        days.insert(day)
                    } else {
                        notes.unknownDays.append("\(label): day \"\(name)\" is not a day name; skipped")
                    }
                }
            }
            switch interval(start: raw.startTime, end: raw.endTime) {
            case .success(let interval?):
                windows.append(Window(days: days, interval: interval))
            case .success(nil):
                // Empty start and end: the whole of each listed day.
                windows.append(Window(days: days, interval: .wholeDay))
            case .failure(let why):
                notes.voidWindows.append("\(label) is void: \(why)")
            }
        }
        guard let schedule = screenTime.schedule else {
            return TimeRules(windows: windows, weekday: nil, weekend: nil)
        }
        func half(_ span: CompiledPolicy.Span, _ name: String) -> DailyInterval? {
            switch interval(start: span.start, end: span.end) {
            case .success(let interval): return interval
            case .failure(let why):
                notes.ignoredHalves.append("\(name) is ignored: \(why)")
                return nil
            }
        }
        return TimeRules(
            windows: windows, weekday: half(schedule.weekday, "weekday"),
            weekend: half(schedule.weekend, "weekend"))
    }

    /// `.success(nil)` when both times are empty; a failure names the bad time.
    static func interval(start: String, end: String) -> Result<DailyInterval?, IntervalError> {
        let startEmpty = start.policyTrimmed.isEmpty
        let endEmpty = end.policyTrimmed.isEmpty
        if startEmpty && endEmpty { return .success(nil) }
        if startEmpty || endEmpty {
            return .failure(IntervalError(text: startEmpty ? "start is empty" : "end is empty"))
        }
        guard let from = ClockTime(start, role: .start) else {
            return .failure(IntervalError(text: "start \"\(start)\" is not a time (H:MM or HH:MM, 00:00–23:59)"))
        }
        guard let to = ClockTime(end, role: .end) else {
            return .failure(IntervalError(text: "end \"\(end)\" is not a time (H:MM or HH:MM, 00:00–24:00)"))
        }
        return .success(DailyInterval(start: from, end: to))
    }

    struct IntervalError: Error, CustomStringConvertible {
        let text: String
        var description: String { text }
    }
}
