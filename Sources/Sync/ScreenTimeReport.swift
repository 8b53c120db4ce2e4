import Policy
import Store
import Zoneinfo

/// The daily `screen_time` report of one profile (docs/sync.md#screen-time): the minutes
/// its devices were online on one local day (docs/services.md#minutes-online), and those
/// they used app services, by service kind and by app, as the network saw them. A minute
/// counts once however many services or devices used it.
public struct ScreenTimeReport: Equatable, Sendable {
    public struct App: Equatable, Sendable {
        public var service: String
        public var bundleID: String
        public var bundleIDs: [String]
        public var minutes: Int
    }

    /// `YYYY-MM-DD`, local.
    public var date: String
    public var totalMinutes: Int
    public var byCategory: [String: Int]
    /// Most minutes first (then by service id).
    public var topApps: [App]

    /// How the minutes were seen, for whoever reads the report.
    public static let detail =
        "network-observed: total_minutes are minutes online, estimated from network activity (a minute "
        + "counts when a device of the profile asked for a name that is not background, or moved more than "
        + "8 KiB through a connection to one; background services not counted); an app's minute counts when "
        + "a device asked for one of its names or moved bytes through a connection to it; apps are matched "
        + "by their domains"

    /// The report of `day` (local days since 1970) from its stored rows. A service the
    /// catalogue no longer knows counts in the total and under kind `other`.
    public init(day: Int, rows: [ServiceMinutesRow], services: ServiceCatalogue) {
        date = CivilCalendar.isoDate(days: day)
        var all = MinuteSet()
        var kinds: [String: MinuteSet] = [:]
        var apps: [App] = []
        var online: MinuteSet?
        for row in rows {
            guard let minutes = MinuteSet(bytes: row.minutes), minutes.count > 0 else { continue }
            if row.service == ServiceUsage.online {
                online = minutes
                continue
            }
            all.formUnion(minutes)
            let known = services.service(named: row.service).map { services.services[$0] }
            kinds[known?.kind.rawValue ?? "other", default: MinuteSet()].formUnion(minutes)
            apps.append(
                App(
                    service: row.service, bundleID: known?.bundleIDs.first ?? row.service,
                    bundleIDs: known?.bundleIDs ?? [], minutes: minutes.count))
        }
        // The minutes online, as the daily limit counts them; a day stored before they were
        // counted has only its apps' minutes.
        totalMinutes = online?.count ?? all.count
        byCategory = kinds.mapValues(\.count)
        topApps = apps.sorted { ($0.minutes, $1.service) > ($1.minutes, $0.service) }
    }
}
