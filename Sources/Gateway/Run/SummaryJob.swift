import Locks
import Notify
import ParentPage
import Store
import SystemIO
import Zoneinfo

/// Each child's daily summary (docs/requests-and-notifications.md#the-daily-summary): at
/// the first flush (every 5 s, on the sync thread) at or after `summary_time` local, once a
/// day per profile, made from the store, kept for the page 30 days, and sent as a
/// notification when notifications are on. A gateway started after `summary_time` makes
/// the day's at once; a day it was off for has none.
final class SummaryJob: Sendable {
    /// `summary_time`, minutes after local midnight.
    let minuteOfDay: Int
    private let store: Store
    private let profiles: [String]
    private let zone: @Sendable () -> ZoneRules
    private let appName: @Sendable (String) -> String?
    private let notify: NotifySetup?
    private let log: Logger
    /// Per profile, the last day whose summary is known to be made.
    private let made = Lock<[String: Int]>([:])

    static let keptDays = 30

    init(
        minuteOfDay: Int, store: Store, profiles: [String], zone: @escaping @Sendable () -> ZoneRules,
        appName: @escaping @Sendable (String) -> String?, notify: NotifySetup?, log: Logger
    ) {
        self.minuteOfDay = minuteOfDay
        self.store = store
        self.profiles = profiles
        self.zone = zone
        self.appName = appName
        self.notify = notify
        self.log = log
    }

    /// Makes what is due at `now` (unix seconds).
    func run(now: Int64) {
        let zone = self.zone()
        let local = zone.localDateTime(at: now)
        guard local.hour * 60 + local.minute >= minuteOfDay else { return }
        let day = local.daysSince1970
        let due = made.withLock { made in profiles.filter { made[$0] != day } }
        guard !due.isEmpty else { return }
        for profile in due {
            do {
                let summary = try DaySummary.make(
                    store: store, profile: profile, zone: zone, now: now, appName: appName)
                let kept = try store.addSummary(
                    SummaryRow(profile: profile, day: day, madeAt: now, body: summary.json()))
                if kept, let notify {
                    notify.notifier.post(
                        Notices.summary(
                            profile: profile, day: day, title: summary.title, lines: summary.lines, now: now,
                            page: notify.page))
                }
                if kept { log.info("summary_made", [("profile", profile), ("day", summary.date)]) }
                made.withLock { $0[profile] = day }
            } catch {
                // Tried again at the next flush.
                log.warn("summary_failed", [("profile", profile), ("error", "\(error)")])
            }
        }
        try? store.pruneSummaries(beforeDay: day - Self.keptDays + 1)
    }
}
