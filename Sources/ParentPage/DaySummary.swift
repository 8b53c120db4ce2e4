import FoundationEssentials
import Policy
import Store
import Zoneinfo

/// A child's day in a few lines (docs/requests-and-notifications.md#the-daily-summary): made
/// once a day at `summary_time` from the store, kept 30 days, shown on the Summaries page
/// and sent as a notification. Its JSON is what `GET /api/summaries` returns.
public struct DaySummary: Sendable, Equatable, Codable {
    public struct Count: Sendable, Equatable, Codable {
        public var name: String
        public var count: Int
    }

    public struct App: Sendable, Equatable, Codable {
        public var id: String
        public var name: String
        public var minutes: Int
    }

    public struct Asked: Sendable, Equatable, Codable {
        public var kind: String
        public var target: String?
        public var note: String
        /// `allow`, `deny`, or nil when not answered.
        public var answer: String?
        public var minutes: Int?
    }

    public struct Device: Sendable, Equatable, Codable {
        public var client: String
        public var address: String?
    }

    public var profile: String
    /// The local day, in days since 1970, and as `YYYY-MM-DD`.
    public var day: Int
    public var date: String
    /// Unix seconds: the summary covers the day from local midnight to here.
    public var madeAt: Int64
    /// Minutes online (a minute with any use, the daily limit's count).
    public var onlineMinutes: Int
    /// Minutes of each app used, most first.
    public var apps: [App]
    public var queries: Int
    public var blocks: Int
    public var blocksByCategory: [Count]
    public var blocksByReason: [Count]
    /// The most blocked names, most first, at most `topNames`.
    public var topBlocked: [Count]
    public var requests: [Asked]
    public var newDevices: [Device]

    enum CodingKeys: String, CodingKey {
        case profile, day, date, apps, queries, blocks, requests
        case madeAt = "made_at"
        case onlineMinutes = "online_minutes"
        case blocksByCategory = "blocks_by_category"
        case blocksByReason = "blocks_by_reason"
        case topBlocked = "top_blocked"
        case newDevices = "new_devices"
    }

    public static let topNames = 5

    /// The summary of `profile` for the local day of `now` in `zone`, from its midnight to
    /// `now`, as the store has it. `appName` names an app id from the catalogue.
    public static func make(
        store: Store, profile: String, zone: ZoneRules, now: Int64, appName: (String) -> String?
    ) throws(StoreError) -> DaySummary {
        let local = zone.localDateTime(at: now)
        let day = local.daysSince1970
        func two(_ number: Int) -> String { number < 10 ? "0\(number)" : "\(number)" }
        let date = "\(local.year)-\(two(local.month))-\(two(local.day))"
        let dayStart = Times.startOfDay(now, zone: zone)
        var online = 0
        var apps: [App] = []
        for row in try store.serviceMinutes(day: day, profile: profile) {
            guard let minutes = MinuteSet(bytes: row.minutes)?.count, minutes > 0 else { continue }
            if row.service == ServiceUsage.online {
                online = minutes
            } else if !row.service.hasPrefix("*") {
                apps.append(App(id: row.service, name: appName(row.service) ?? row.service, minutes: minutes))
            }
        }
        apps.sort { ($1.minutes, $0.name) < ($0.minutes, $1.name) }
        let counts = try store.dayCounts(profile: profile, since: dayStart)
        let totals = try store.blockTotals(profile: profile, from: dayStart)
        let names = try store.recentHits(since: dayStart, profile: profile, everyGateway: true)
            .map { Count(name: $0.domain, count: $0.count) }
            .sorted { ($1.count, $0.name) < ($0.count, $1.name) }
        let asked = try store.requests(profile: profile, from: dayStart, to: now + 1).map {
            Asked(kind: $0.kind, target: $0.target, note: $0.note, answer: $0.answer, minutes: $0.minutes)
        }
        let devices = try store.sightings(since: dayStart)
            .filter { $0.profile == profile && $0.firstSeen >= dayStart }
            .sorted { $0.firstSeen < $1.firstSeen }
            .map { Device(client: $0.client, address: $0.address) }
        return DaySummary(
            profile: profile, day: day, date: date, madeAt: now, onlineMinutes: online, apps: apps,
            queries: counts.queries, blocks: counts.blocks,
            blocksByCategory: totals.byCategory.map { Count(name: $0.name, count: $0.count) },
            blocksByReason: totals.byReason.map { Count(name: $0.name, count: $0.count) },
            topBlocked: Array(names.prefix(topNames)), requests: asked, newDevices: devices)
    }

    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let bytes = try? encoder.encode(self) else { return "{}" }
        return String(decoding: bytes, as: UTF8.self)
    }

    public init?(json: String) {
        guard let decoded = try? JSONDecoder().decode(DaySummary.self, from: Data(json.utf8)) else { return nil }
        self = decoded
    }

    init(
        profile: String, day: Int, date: String, madeAt: Int64, onlineMinutes: Int, apps: [App], queries: Int,
        blocks: Int, blocksByCategory: [Count], blocksByReason: [Count], topBlocked: [Count], requests: [Asked],
        newDevices: [Device]
    ) {
        self.profile = profile
        self.day = day
        self.date = date
        self.madeAt = madeAt
        self.onlineMinutes = onlineMinutes
        self.apps = apps
        self.queries = queries
        self.blocks = blocks
        self.blocksByCategory = blocksByCategory
        self.blocksByReason = blocksByReason
        self.topBlocked = topBlocked
        self.requests = requests
        self.newDevices = newDevices
    }

    // MARK: Words

    /// `alice on 2026-12-07: 95 min online, 42 blocks`.
    public var title: String {
        "\(profile) on \(date): \(onlineMinutes) min online, \(blocks) block\(blocks == 1 ? "" : "s")"
    }

    /// The lines of the notification: apps, blocks, names, questions, devices; each left
    /// out when there is nothing to say.
    public var lines: [String] {
        var lines: [String] = []
        if !apps.isEmpty {
            lines.append("Apps: " + apps.map { "\($0.name) \($0.minutes) min" }.joined(separator: ", "))
        }
        if !blocksByCategory.isEmpty {
            lines.append("Blocked: " + blocksByCategory.map { "\($0.name) \($0.count)" }.joined(separator: ", "))
        }
        if !topBlocked.isEmpty {
            lines.append("Most blocked: " + topBlocked.map { "\($0.name) (\($0.count))" }.joined(separator: ", "))
        }
        if !requests.isEmpty {
            let allowed = requests.filter { $0.answer == "allow" }.count
            let denied = requests.filter { $0.answer == "deny" }.count
            lines.append(
                "Asked \(requests.count) time\(requests.count == 1 ? "" : "s"): \(allowed) allowed, \(denied) no, "
                    + "\(requests.count - allowed - denied) not answered")
        }
        if !newDevices.isEmpty {
            lines.append("New devices: " + newDevices.map(\.client).joined(separator: ", "))
        }
        if lines.isEmpty { lines.append("\(queries) queries, nothing blocked.") }
        return lines
    }

    /// The summary as a card of the Summaries page; every value written escaped.
    var html: String {
        var out =
            "<section class=\"card summary\" id=\"summary-\(Escape.html(profile))-\(day)\">"
            + "<h2>\(Escape.html(profile)) · \(Escape.html(date))</h2>"
            + "<p>\(onlineMinutes) min online · \(queries) queries · \(blocks) blocks</p>"
        func list(_ title: String, _ items: [String]) {
            guard !items.isEmpty else { return }
            out += "<h3>\(Escape.html(title))</h3><ul>" + items.map { "<li>\(Escape.html($0))</li>" }.joined() + "</ul>"
        }
        list("Apps", apps.map { "\($0.name): \($0.minutes) min" })
        list("Blocks by category", blocksByCategory.map { "\($0.name): \($0.count)" })
        list("Most blocked", topBlocked.map { "\($0.name): \($0.count)" })
        list(
            "Asked",
            requests.map { asked in
                var text = asked.kind == "time" ? "More time" : (asked.kind == "app" ? "More time on " : "Open ")
                if asked.kind != "time" { text += asked.target ?? "" }
                if !asked.note.isEmpty { text += " — “\(asked.note)”" }
                switch asked.answer {
                case "allow": text += ": allowed" + (asked.minutes.map { " for \($0) min" } ?? "")
                case "deny": text += ": no"
                default: text += ": not answered"
                }
                return text
            })
        list(
            "New devices",
            newDevices.map { device in
                device.client + (device.address.flatMap { $0 == device.client ? nil : " (\($0))" } ?? "")
            })
        return out + "</section>"
    }
}
