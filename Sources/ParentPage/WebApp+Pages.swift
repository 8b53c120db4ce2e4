import Policy
import Store
import Zoneinfo

/// The HTML pages and their forms (docs/parent-page.md#pages): each form posts, then the
/// browser is sent back to the page it came from (303), so a reload never posts twice.
extension WebApp {
    func page(_ request: WebRequest, segments: [String], csrf: String) throws -> WebResponse {
        let client = request.client.description
        if request.method == "GET" || request.method == "HEAD" {
            switch segments.count {
            case 0: return .html(200, try home(csrf: csrf))
            case 1 where segments[0] == "devices": return .html(200, try devicesPage(csrf: csrf))
            case 1 where segments[0] == "summaries": return .html(200, try summariesPage(csrf: csrf))
            case 2 where segments[0] == "profiles":
                return .html(200, try dayPage(try profile(named: segments[1]), query: request.query, csrf: csrf))
            default: throw Refusal(404, "no such page")
            }
        }
        guard request.method == "POST" else { throw Refusal(405, "use GET or POST") }
        let form = request.form
        let zone = household.currentEngine().zone
        switch (segments.count, segments.first) {
        case (3, "profiles"):
            let profile = try profile(named: segments[1])
            switch segments[2] {
            case "pause":
                let end: Int64?
                switch form["until"] {
                case "morning": end = Times.next(hour: 6, after: now, zone: zone)
                case "resumed": end = nil
                default: end = try self.end(minutes: Int(form["minutes"] ?? ""), until: nil, open: false)
                }
                _ = try pause(profile, end: end, client: client)
            case "resume": try resume(profile, client: client)
            case "extend":
                let app = form["app"].flatMap { $0.isEmpty ? nil : $0 }
                _ = try extend(profile, minutes: try minutes(Int(form["minutes"] ?? "")), app: app, client: client)
            case "exceptions":
                let end =
                    form["until"] == "today"
                    ? Times.nextMidnight(after: now, zone: zone)
                    : now + Int64(try minutes(Int(form["minutes"] ?? ""))) * 60
                _ = try except(profile, name: form["name"] ?? "", end: end, client: client)
            default: throw Refusal(404, "no such action")
            }
        case (2, "requests"):
            guard let id = Int64(segments[1]) else { throw Refusal(404, "no such request") }
            let grant = try grant(answer: form["answer"], value: form["grant"], minutes: nil, always: nil)
            _ = try answer(request: id, grant: grant, client: client)
        case (3, "overrides") where segments[2] == "delete":
            guard let id = Int64(segments[1]) else { throw Refusal(404, "no such override") }
            try removeOverride(id: id, client: client)
        case (2, "devices") where segments[1] == "seen":
            var shown = now
            if let text = form["through"] {
                guard let at = Int64(text) else { throw Refusal(400, "through must be a time in Unix seconds") }
                shown = min(at, now)
            }
            try markDevicesSeen(through: shown, client: client)
        case (2, "devices"):
            try saveDevice(mac: segments[1], name: form["name"], profile: form["profile"], client: client)
        default: throw Refusal(404, "no such action")
        }
        return .redirect(Self.back(form["back"]))
    }

    /// Where a form returns: one of the page's own paths, never another site.
    static func back(_ path: String?) -> String {
        guard let path, path.hasPrefix("/"), !path.hasPrefix("//"), !path.contains("\\"),
            path.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { return "/" }
        return path
    }

    private func home(csrf: String) throws -> String {
        let zone = household.currentEngine().zone
        var body = try sharedStoreNotice(zone: zone)
        body += try requestsSection(csrf: csrf, zone: zone)
        body += "<div class=\"cards\">"
        for entry in try cards() {
            let card = entry.card
            let name = Escape.html(card.name)
            let path = "/profiles/" + Escape.url(card.name)
            let state = stateText(card, zone: zone)
            body +=
                "<section class=\"card\" data-profile=\"\(name)\"><h2><a href=\"\(Escape.html(path))\">\(name)</a></h2>"
            body += "<p class=\"state \(card.state.rawValue)\">\(Escape.html(state))</p>"
            body += "<p class=\"muted\">Today: \(entry.today.queries) queries, \(entry.today.blocks) blocked</p>"
            if let daily = card.daily {
                let left = max(daily.limitMinutes - daily.usedMinutes, 0)
                body +=
                    "<p class=\"daily\">Online today: \(daily.usedMinutes) of \(daily.limitMinutes) min, \(left) left "
                    + "<span class=\"muted\">(estimated from network activity)</span></p>"
            }
            for budget in card.budgets {
                body +=
                    "<p>\(Escape.html(budget.app)): \(budget.usedMinutes) of \(budget.limitMinutes) min "
                    + Pages.button(
                        "+15 min", action: path + "/extend", csrf: csrf,
                        fields: [("minutes", "15"), ("app", budget.app)]) + "</p>"
            }
            body += "<div class=\"actions\">"
            if card.state == .paused {
                body += Pages.button("Resume", action: path + "/resume", csrf: csrf, style: "primary")
            } else {
                body += Pages.button("Pause 15 min", action: path + "/pause", csrf: csrf, fields: [("minutes", "15")])
                body += Pages.button("Pause 1 h", action: path + "/pause", csrf: csrf, fields: [("minutes", "60")])
                body += Pages.button(
                    "Pause until 06:00", action: path + "/pause", csrf: csrf, fields: [("until", "morning")])
                body += Pages.button("Pause", action: path + "/pause", csrf: csrf, fields: [("until", "resumed")])
            }
            for minutes in [15, 30, 60] {
                body += Pages.button(
                    "+\(minutes) min", action: path + "/extend", csrf: csrf, fields: [("minutes", "\(minutes)")])
            }
            body += "</div>"
            if !entry.devices.isEmpty {
                body +=
                    "<p class=\"muted\">Devices in the last hour: "
                    + entry.devices.map { Escape.html($0.client) }.joined(separator: ", ") + "</p>"
            }
            body += overridesList(card.overrides, csrf: csrf, zone: zone)
            body += "</section>"
        }
        body += "</div>"
        return Pages.document(title: "Children", body: body, csrf: csrf)
    }

    /// With two gateways on a shared store that this one cannot reach
    /// (docs/two-gateways.md): since when, and what that means for the parent.
    private func sharedStoreNotice(zone: ZoneRules) throws -> String {
        guard let state = try store.sharedState(), !state.connected, state.since > 0 else { return "" }
        let since = Times.local(state.since, now: now, zone: zone)
        return
            "<p class=\"card error\" id=\"shared-store\">The other gateways' shared store has been unreachable since "
            + "\(Escape.html(since)): this gateway enforces what it last had, and what you change here reaches the "
            + "others when the store is back.</p>"
    }

    private func overridesList(_ overrides: [Override], csrf: String, zone: ZoneRules) -> String {
        guard !overrides.isEmpty else { return "" }
        var list = "<ul class=\"overrides\">"
        for override in overrides {
            var text = override.kindName
            switch override.kind {
            case .exception(let name): text = "allow " + name.description
            case .appBonus(let service, let minutes, _): text = "+\(minutes) min of \(service)"
            case .dailyBonus(let minutes, _): text = "+\(minutes) min of the daily limit"
            case .pause, .extension: break
            }
            let until = override.end.map { " until " + Times.local($0, now: now, zone: zone) } ?? " until resumed"
            list +=
                "<li>\(Escape.html(text + until)) <span class=\"muted\">set \(Escape.html(Times.local(override.start, now: now, zone: zone))) by \(Escape.html(override.setBy))</span> "
                + Pages.button("Remove", action: "/overrides/\(override.id)/delete", csrf: csrf, style: "danger")
                + "</li>"
        }
        return list + "</ul>"
    }

    private func dayPage(_ profile: Profile, query: [String: String], csrf: String) throws -> String {
        let engine = household.currentEngine()
        let zone = engine.zone
        let path = "/profiles/" + Escape.url(profile.name)
        let midnight = Times.startOfDay(now, zone: zone)
        let nextMidnight = Times.nextMidnight(after: now, zone: zone)
        let card = ProfileCard(profile, engine: engine, at: now)
        var body = "<h2>\(Escape.html(profile.name))</h2>"
        body += "<p class=\"state \(card.state.rawValue)\">\(Escape.html(stateText(card, zone: zone)))</p>"

        let hours = try store.hours(profile: profile.name, from: midnight - midnight % 3_600, to: nextMidnight)
        let queries = hours.reduce(0) { $0 + $1.queries }
        let blocks = hours.reduce(0) { $0 + $1.blocks }
        body += "<h3>Today</h3><p class=\"muted\">\(queries) queries, \(blocks) blocked "
        body += "<span class=\"key q\">queries</span> <span class=\"key b\">blocked</span></p>"
        body += DayChart.svg(hours: hours, midnight: midnight, nextMidnight: nextMidnight, zone: zone)
        let totals = try store.blockTotals(profile: profile.name, from: midnight - midnight % 3_600)
        if !totals.byReason.isEmpty || !totals.byCategory.isEmpty {
            body += "<div class=\"totals\">"
            for (title, rows) in [("Blocked today by reason", totals.byReason), ("by category", totals.byCategory)]
            where !rows.isEmpty {
                body += "<div><h4>\(title)</h4><ul>"
                for row in rows { body += "<li>\(Escape.html(row.name)): \(row.count)</li>" }
                body += "</ul></div>"
            }
            body += "</div>"
        }

        body += "<h3>Allow a site</h3>"
        body +=
            "<form method=\"post\" action=\"\(Escape.html(path))/exceptions\" class=\"allow\">"
            + "<input type=\"hidden\" name=\"csrf_token\" value=\"\(Escape.html(csrf))\">"
            + "<input type=\"hidden\" name=\"back\" value=\"\(Escape.html(path))\">"
            + "<input type=\"text\" name=\"name\" required maxlength=\"253\" placeholder=\"example.com\" "
            + "value=\"\(Escape.html(query["allow"] ?? ""))\"> for "
            + "<input type=\"number\" name=\"minutes\" min=\"1\" max=\"\(Self.maxMinutes)\" value=\"60\"> min "
            + "<button>Allow</button></form>"

        let filters = ["device", "reason", "name"].compactMap { key in
            query[key].flatMap { $0.isEmpty ? nil : (key, $0) }
        }
        let rows = try store.history(
            profile: profile.name, before: Int64(query["before"] ?? "") ?? .max, limit: Self.historyPage,
            client: query["device"].flatMap { $0.isEmpty ? nil : $0 },
            reason: query["reason"].flatMap { $0.isEmpty ? nil : $0 },
            domain: query["name"].flatMap { $0.isEmpty ? nil : $0.lowercased() })
        body += "<h3>Blocks of the last days</h3>"
        body += "<form method=\"get\" action=\"\(Escape.html(path))\" class=\"filter\">"
        for (key, label) in [("name", "name"), ("reason", "reason"), ("device", "device")] {
            body +=
                "<input type=\"text\" name=\"\(key)\" placeholder=\"\(label)\" maxlength=\"253\" "
                + "value=\"\(Escape.html(query[key] ?? ""))\"> "
        }
        body += "<button>Filter</button></form>"
        body +=
            "<table class=\"history\"><thead><tr><th>Last seen</th><th>Name</th><th>Reason</th><th>Device</th>"
            + "<th>Count</th><th></th></tr></thead><tbody>"
        for row in rows {
            let allow =
                Pages.button(
                    "Allow 1 h", action: path + "/exceptions", csrf: csrf,
                    fields: [("name", row.domain), ("minutes", "60"), ("back", path)])
                + Pages.button(
                    "Allow today", action: path + "/exceptions", csrf: csrf,
                    fields: [("name", row.domain), ("until", "today"), ("back", path)])
            body +=
                "<tr><td>\(Escape.html(Times.local(row.lastSeen, now: now, zone: zone)))</td>"
                + "<td class=\"name\">\(Escape.html(row.domain))</td><td>\(Escape.html(row.reason))</td>"
                + "<td>\(Escape.html(row.client))</td><td>\(row.count)</td><td>\(allow)</td></tr>"
        }
        body += "</tbody></table>"
        if rows.isEmpty { body += "<p class=\"muted\">No blocks.</p>" }
        if let last = rows.last, rows.count == Self.historyPage {
            let more = (filters + [("before", "\(last.lastSeen)")]).map { "\($0.0)=\(Escape.url($0.1))" }
            body += "<p><a href=\"\(Escape.html(path + "?" + more.joined(separator: "&")))\">Older</a></p>"
        }
        return Pages.document(title: profile.name, body: body, csrf: csrf)
    }

    /// Rows of the block history per page.
    static let historyPage = 50

    /// A card's state in words: `paused until 19:30`, `downtime until 07:00`, `allowed`.
    func stateText(_ card: ProfileCard, zone: ZoneRules) -> String {
        var state = card.state == .dailyLimit ? "daily limit reached" : card.state.rawValue
        if let until = card.until { state += " until " + Times.local(until, now: now, zone: zone) }
        if card.state == .paused, card.until == nil { state += " until resumed" }
        return state
    }
}
