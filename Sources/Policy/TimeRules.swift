import Zoneinfo

/// Why the clock cuts a child off (docs/decisions.md#the-decision-order, step 2).
public enum CutoffKind: Equatable, Sendable {
    /// Inside a downtime window.
    case downtime
    /// Outside the allowed hours of the schedule.
    case schedule
}

/// The downtime windows and the schedule of one policy, compiled from its strings.
/// Everything here works on the wall clock (weekday, minute of day) of the gateway's
/// zone; turning an instant into a wall clock is the caller's job.
public struct TimeRules: Equatable, Sendable {
    public struct Window: Equatable, Sendable {
        /// Days on which the window starts.
        public let days: Set<Weekday>
        public let interval: DailyInterval
    }

    public let windows: [Window]
    /// Allowed hours for Monday–Friday and for Saturday–Sunday; nil = no restriction.
    public let weekday: DailyInterval?
    public let weekend: DailyInterval?

    public static let none = TimeRules(windows: [], weekday: nil, weekend: nil)

    public init(windows: [Window], weekday: DailyInterval?, weekend: DailyInterval?) {
        self.windows = windows
        self.weekday = weekday
        self.weekend = weekend
    }

    public var isEmpty: Bool { windows.isEmpty && weekday == nil && weekend == nil }

    /// The cutoff in force at wall-clock time `local`, downtime before schedule.
    public func cutoff(at local: LocalDateTime) -> CutoffKind? {
        let day = local.weekday
        let minute = local.minuteOfDay
        for window in windows {
            if window.days.contains(day), window.interval.containsToday(minute) { return .downtime }
            if window.days.contains(day.previous), window.interval.containsFromYesterday(minute) { return .downtime }
        }
        // Only a day whose half has times restricts; yesterday's interval may still run
        // past midnight into today, even when it comes from the other half.
        if let today = allowed(on: day) {
            let fromYesterday = allowed(on: day.previous)?.containsFromYesterday(minute) ?? false
            if !today.containsToday(minute), !fromYesterday { return .schedule }
        }
        return nil
    }

    func allowed(on day: Weekday) -> DailyInterval? { day.isWeekend ? weekend : weekday }
}

extension TimeRules {
    /// The latest instant to scan when looking for a change: a week plus a day covers
    /// every pattern a weekly rule can make.
    static let scanMinutes = 8 * 24 * 60

    /// The earliest instant ≥ `instant` at which no cutoff applies (the block page's
    /// "until"), or nil when the rules cut off for the whole coming week.
    public func cutoffEnd(from instant: Int64, zone: ZoneRules) -> Int64? {
        guard cutoff(at: zone.localDateTime(at: instant)) != nil else { return instant }
        return firstInstant(after: instant, zone: zone) { self.cutoff(at: $0) == nil }
    }

    /// The first instant > `instant` at which the cutoff state (none, downtime,
    /// schedule) changes, or nil within a week: answers may not be cached past it (docs/dns.md#cache).
    public func nextBoundary(after instant: Int64, zone: ZoneRules) -> Int64? {
        guard !isEmpty else { return nil }
        let now = cutoff(at: zone.localDateTime(at: instant))
        return firstInstant(after: instant, zone: zone) { self.cutoff(at: $0) != now }
    }

    /// Walks whole minutes (rules change only on a minute of the wall clock).
    private func firstInstant(after instant: Int64, zone: ZoneRules, where test: (LocalDateTime) -> Bool) -> Int64? {
        var candidate = instant - ((instant % 60) + 60) % 60
        for _ in 0..<TimeRules.scanMinutes {
            candidate += 60
            if test(zone.localDateTime(at: candidate)) { return candidate }
        }
        return nil
    }
}
