import DomainMatch
import Policy
import ProxyCore
import Store
import Zoneinfo

/// The child's page itself: the state in words, the minutes left, the last blocks and the
/// requests, and the forms to ask. Nothing on it changes anything but a request.
extension ChildApp {
    /// Blocks shown, newest first.
    static let blocksShown = 10
    /// Minutes left of the daily limit from which the page warns.
    static let warnAtMinutesLeft = 10

    func page(_ device: Device, asking: [String: String], notice: String?) throws -> String {
        let engine = household.currentEngine()
        let zone = engine.zone
        let profile = profile(of: device)
        var body = ""
        if let notice { body += "<p class=\"error\">\(Escape.html(notice))</p>" }
        guard profile.rules.filtered else {
            return Pages.document(title: "This device", body: body + "<h2>This device is not filtered.</h2>")
        }
        let card = ProfileCard(profile, engine: engine, at: now)
        body += "<section class=\"card now\"><h2>Now</h2>"
        body += "<p class=\"state \(card.state.rawValue)\">\(Escape.html(stateWords(card, zone: zone)))</p>"
        if card.state == .allowed || card.state == .extended,
            let change = profile.rules.time.nextBoundary(after: now, zone: zone),
            let kind = profile.rules.time.cutoff(at: zone.localDateTime(at: change))
        {
            let what = kind == .downtime ? "Downtime starts" : "The allowed hours end"
            body += "<p class=\"next\">\(what) at \(Escape.html(Times.local(change, now: now, zone: zone))).</p>"
        }
        if let daily = card.daily {
            let left = max(daily.limitMinutes - daily.usedMinutes, 0)
            let warn = left <= Self.warnAtMinutesLeft ? " warning" : ""
            body +=
                "<p class=\"daily\(warn)\">\(left) of \(daily.limitMinutes) minutes online left today"
                + (left > 0 && left <= Self.warnAtMinutesLeft ? ": time to finish up." : ".") + "</p>"
        }
        for budget in card.budgets {
            let left = max(budget.limitMinutes - budget.usedMinutes, 0)
            body +=
                "<p class=\"budget\">\(Escape.html(budget.app)): \(left) of \(budget.limitMinutes) minutes left today</p>"
        }
        body += "</section>"
        body += try blocks(device, profile: profile, zone: zone)
        body += try requests(device, zone: zone)
        body += askForms(profile, engine: engine, asking: asking)
        return Pages.document(title: "This device", body: body)
    }

    func stateWords(_ card: ProfileCard, zone: ZoneRules) -> String {
        let until = card.until.map { " until " + Times.local($0, now: now, zone: zone) } ?? ""
        switch card.state {
        case .allowed: return "The internet is open."
        case .paused: return "A parent has paused the internet" + (until.isEmpty ? "." : until + ".")
        case .downtime: return "It is downtime" + until + "."
        case .schedule: return "It is outside the allowed hours" + until + "."
        case .extended: return "A parent gave more time" + until + "."
        case .dailyLimit: return "Today's time online is used up" + until + "."
        }
    }

    private func blocks(_ device: Device, profile: Profile, zone: ZoneRules) throws -> String {
        let rows = try store.history(
            profile: profile.name, before: .max, limit: Self.blocksShown, client: device.address.description)
        guard !rows.isEmpty else { return "" }
        var list = "<section class=\"card blocks\"><h2>Last blocked</h2><ul>"
        for row in rows {
            let words = BlockReason(text: row.reason).plainWords
            let name = row.domain
            let ask = "/ask?kind=site&name=" + Escape.url(name)
            list +=
                "<li><strong>\(Escape.html(name))</strong> <span class=\"muted\">"
                + "\(Escape.html(Times.local(row.lastSeen, now: now, zone: zone)))</span><br>\(Escape.html(words)) "
                + "<a href=\"\(Escape.html(ask))\">Ask to open it</a></li>"
        }
        return list + "</ul></section>"
    }

    private func requests(_ device: Device, zone: ZoneRules) throws -> String {
        let since = Times.startOfDay(now, zone: zone)
        let rows = try store.requests(device: device.key, since: since)
        guard !rows.isEmpty else { return "" }
        var list = "<section class=\"card requests\"><h2>Your questions today</h2><ul>"
        for row in rows {
            var text = Self.words(row)
            if !row.note.isEmpty { text += " — “" + row.note + "”" }
            let answer: String
            switch row.answer {
            case "allow"?: answer = "Yes" + (row.minutes.map { ", for \($0) minutes" } ?? "") + "."
            case "deny"?: answer = "No."
            default: answer = row.expiresAt > now ? "Waiting for an answer." : "No answer today."
            }
            list +=
                "<li data-request=\"\(row.id)\">\(Escape.html(text)) <span class=\"muted\">"
                + "\(Escape.html(Times.local(row.askedAt, now: now, zone: zone)))</span><br>"
                + "<span class=\"answer\">\(Escape.html(answer))</span></li>"
        }
        return list + "</ul></section>"
    }

    /// A request in the child's words.
    static func words(_ row: RequestRow) -> String {
        switch row.kind {
        case "time": return "More time"
        case "app": return "More time on \(row.target ?? "an app")"
        default: return "Open \(row.target ?? "a site")"
        }
    }

    private func askForms(_ profile: Profile, engine: DecisionEngine<LabelTrie>, asking: [String: String]) -> String {
        let note =
            "<label>Note <input name=\"note\" maxlength=\"\(Self.maxNote)\" "
            + "value=\"\(Escape.html(asking["note"] ?? ""))\"></label>"
        var forms = "<section class=\"card ask\"><h2>Ask a parent</h2>"
        forms +=
            "<form method=\"post\" action=\"/ask\" class=\"ask-site\"><input type=\"hidden\" name=\"kind\" value=\"site\">"
            + "<label>Open <input name=\"name\" required value=\"\(Escape.html(asking["name"] ?? ""))\" "
            + "placeholder=\"site.example\"></label>\(note)<button>Ask to open it</button></form>"
        forms +=
            "<form method=\"post\" action=\"/ask\" class=\"ask-time\"><input type=\"hidden\" name=\"kind\" value=\"time\">"
            + "\(note)<button>Ask for 30 more minutes</button></form>"
        for service in engine.services.services where profile.rules.dailyMinutes(for: service) != nil {
            forms +=
                "<form method=\"post\" action=\"/ask\" class=\"ask-app\"><input type=\"hidden\" name=\"kind\" value=\"app\">"
                + "<input type=\"hidden\" name=\"app\" value=\"\(Escape.html(service.id))\">\(note)"
                + "<button>Ask for more time on \(Escape.html(service.name))</button></form>"
        }
        return forms + "</section>"
    }
}
