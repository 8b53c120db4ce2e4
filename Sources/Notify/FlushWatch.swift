import Locks
import Store

/// The events found in what each hit flush stored (every 5 s, on the sync thread): new
/// devices, spent budgets, and devices that keep trying to get around the filter.
public final class FlushWatch: Sendable {
    /// More than this many attempts from one device within `window` seconds is an event.
    public let threshold: Int
    public let window: Int64
    private let page: String?
    /// The display name of an app id, for the words.
    private let appName: @Sendable (String) -> String?
    /// A device's name (DHCP host name or the parent's), by its MAC or address.
    private let deviceName: @Sendable (ClientSighting) -> String?
    private struct State {
        /// Per device: its recent attempts (time, count, name), oldest first.
        var attempts: [String: [(at: Int64, count: Int, name: String, profile: String)]] = [:]
        /// Per device: when its last event was made.
        var lastEvent: [String: Int64] = [:]
    }
    private let state = Lock(State())

    public init(
        threshold: Int, window: Int64 = 600, page: String?, appName: @escaping @Sendable (String) -> String?,
        deviceName: @escaping @Sendable (ClientSighting) -> String?
    ) {
        self.threshold = max(threshold, 1)
        self.window = window
        self.page = page
        self.appName = appName
        self.deviceName = deviceName
    }

    /// The reasons (before `:`) that count as an attempt around the filter: a listed
    /// circumvention name (DoH, VPN, proxy), a TLS name other than the one asked, a
    /// tunnel whose destination cannot be read.
    public static let attemptReasons: Set<Substring> = ["circumvention", "sni", "tls_unreadable"]

    public static func isAttempt(_ reason: String) -> Bool {
        attemptReasons.contains(reason.split(separator: ":", maxSplits: 1).first ?? "")
    }

    /// The events of one flush at `now` (unix seconds). A spent budget is found at every
    /// flush under the same id: the notifier keeps each id once.
    public func notices(
        newDevices: [ClientSighting], attempts: [HitRow], budgets: [BudgetStatusRow], now: Int64
    ) -> [Notice] {
        let page = self.page
        var out = newDevices.map { Notices.newDevice($0, name: deviceName($0), page: page) }
        for budget in budgets where budget.dailyMinutes > 0 && budget.used >= budget.dailyMinutes {
            let app = budget.service.hasPrefix("*") ? nil : budget.service
            out.append(
                Notices.budgetSpent(
                    profile: budget.profile, app: app, appName: app.flatMap(appName), used: budget.used,
                    limit: budget.dailyMinutes, day: budget.day, now: now, page: page))
        }
        let window = self.window
        let threshold = self.threshold
        return state.withLock { state in
            for row in attempts where row.client != "*" {
                state.attempts[row.client, default: []].append((row.lastSeen, row.count, row.domain, row.profile))
            }
            for (device, seen) in state.attempts {
                let recent = seen.filter { $0.at > now - window }
                guard !recent.isEmpty else {
                    state.attempts[device] = nil
                    continue
                }
                state.attempts[device] = recent
                let count = recent.reduce(0) { $0 + $1.count }
                guard count > threshold, (state.lastEvent[device] ?? .min) <= now - window else { continue }
                state.lastEvent[device] = now
                var names: [String] = []
                for attempt in recent.reversed() where !names.contains(attempt.name) { names.append(attempt.name) }
                out.append(
                    Notices.circumvention(
                        profile: recent.last?.profile ?? "", device: device, count: count, names: names,
                        windowStart: now - now % window, now: now, page: page))
            }
            state.lastEvent = state.lastEvent.filter { $0.value > now - window }
            return out
        }
    }
}
