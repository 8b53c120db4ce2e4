import Locks
import Zoneinfo

/// The next cutoff boundary of one policy, computed once and reused until it passes:
/// every cached answer's TTL is capped by it (docs/decisions.md#time-rules), and finding it scans a
/// week of minutes.
public final class BoundaryCache: Sendable {
    private struct State {
        /// The answer `boundary` holds for instants in `from..<until`.
        var from: Int64 = 0
        var until: Int64 = 0
        var boundary: Int64?
    }

    private let state = Lock(State())

    public init() {}

    /// The first instant after `now` at which the cutoff state changes, or nil.
    public func next(after now: Int64, rules: TimeRules, zone: ZoneRules) -> Int64? {
        guard !rules.isEmpty else { return nil }
        if let cached = state.withLock({ state -> Int64?? in
            guard now >= state.from, now < state.until else { return nil }
            return .some(state.boundary)
        }) {
            return cached
        }
        let boundary = rules.nextBoundary(after: now, zone: zone)
        // "No change within a week" is worth rechecking after a day.
        state.withLock { $0 = State(from: now, until: boundary ?? now + 86_400, boundary: boundary) }
        return boundary
    }

    /// Seconds from `now` to the next boundary, or nil without time rules.
    public func secondsLeft(from now: Int64, rules: TimeRules, zone: ZoneRules) -> Int64? {
        next(after: now, rules: rules, zone: zone).map { max(0, $0 - now) }
    }
}
