import DomainMatch
import Policy
import Store
import Zoneinfo

/// The children's requests on the parent's page (docs/requests-and-notifications.md#answers):
/// listed while they wait, each answered in one tap. An allow is an override like any the
/// parent sets by hand, listed and removable: a site is an exception (for some minutes,
/// until midnight, or always), time is "+N min", an app's time its bonus minutes.
extension WebApp {
    /// How long an allow lasts: minutes, until local midnight, or (a site only) always.
    enum Grant: Equatable {
        case minutes(Int)
        case today
        case always
    }

    /// Answers request `id`: `grant` nil is a no.
    func answer(request id: Int64, grant: Grant?, client: String) throws -> RequestRow {
        guard let request = try store.request(id: id), request.isWaiting(at: now) else {
            throw Refusal(404, "no request \(id) waiting")
        }
        let profile = try profile(named: request.profile)
        let zone = household.currentEngine().zone
        let midnight = Times.nextMidnight(after: now, zone: zone)
        var override: Override?
        var minutes: Int?
        if let grant {
            switch grant {
            case .minutes(let value): minutes = try self.minutes(value)
            case .today: minutes = Int((midnight - now + 59) / 60)
            case .always: minutes = nil
            }
            switch request.kind {
            case "site":
                guard let text = request.target else { throw Refusal(400, "the request names no site") }
                let end: Int64? =
                    switch grant {
                    case .minutes: now + Int64(minutes ?? 0) * 60
                    case .today: midnight
                    case .always: nil
                    }
                override = try except(profile, name: text, end: end, client: client)
            case "app":
                guard grant != .always, let app = request.target else {
                    throw Refusal(400, "an app's time is given in minutes or for today")
                }
                override = try extend(profile, minutes: minutes ?? 0, app: app, client: client)
            default:
                guard grant != .always else { throw Refusal(400, "time is given in minutes or for today") }
                override = try extend(profile, minutes: minutes ?? 0, app: nil, client: client)
            }
        }
        guard
            let answered = try store.answerRequest(
                id: id, answer: grant == nil ? "deny" : "allow", minutes: minutes, overrideID: override?.id, now: now,
                by: "page \(client)")
        else { throw Refusal(404, "no request \(id) waiting") }
        household.requestAnswered(answered)
        log.info(
            "request_answered",
            [("id", "\(id)"), ("profile", request.profile), ("answer", answered.answer ?? "?"), ("client", client)])
        return answered
    }

    /// The waiting requests on the home page, each with its answers.
    func requestsSection(csrf: String, zone: ZoneRules) throws -> String {
        let waiting = try store.waitingRequests(now: now)
        guard !waiting.isEmpty else { return "" }
        var section = "<section class=\"card requests\"><h2>Asked</h2><ul>"
        for request in waiting {
            let path = "/requests/\(request.id)"
            var text = request.profile + ": " + ChildApp.words(request).lowercased()
            if !request.note.isEmpty { text += " — “" + request.note + "”" }
            section +=
                "<li id=\"request-\(request.id)\" data-request=\"\(request.id)\">\(Escape.html(text)) <span class=\"muted\">"
                + "\(Escape.html(Times.local(request.askedAt, now: now, zone: zone))) from "
                + "\(Escape.html(request.device))</span><div class=\"actions\">"
            var grants: [(String, String)] = [("15 min", "15"), ("1 h", "60"), ("Today", "today")]
            if request.kind == "site" { grants.append(("Always", "always")) }
            for (label, value) in grants {
                section += Pages.button(
                    "Allow " + label.lowercased(), action: path, csrf: csrf,
                    fields: [("answer", "allow"), ("grant", value)], style: "primary")
            }
            section += Pages.button("No", action: path, csrf: csrf, fields: [("answer", "deny")], style: "danger")
            section += "</div></li>"
        }
        return section + "</ul></section>"
    }

    /// A form's or the API's grant: `15`, `60`, `today` or `always`; nil for a no.
    func grant(answer: String?, value: String?, minutes: Int?, always: Bool?) throws -> Grant? {
        switch answer {
        case "deny": return nil
        case "allow":
            if always == true || value == "always" { return .always }
            if value == "today" { return .today }
            if let minutes = minutes ?? value.flatMap({ Int($0) }) { return .minutes(try self.minutes(minutes)) }
            return .today
        default: throw Refusal(400, "answer is allow or deny")
        }
    }

    func requestJSON(_ row: RequestRow) -> String {
        func optional(_ text: String?) -> String { text.map(Escape.json) ?? "null" }
        return "{\"id\": \(row.id), \"profile\": \(Escape.json(row.profile)), \"device\": \(Escape.json(row.device)), "
            + "\"kind\": \(Escape.json(row.kind)), \"target\": \(optional(row.target)), "
            + "\"note\": \(Escape.json(row.note)), \"asked_at\": \(Escape.json(Timestamp.rfc3339(row.askedAt))), "
            + "\"expires_at\": \(Escape.json(Timestamp.rfc3339(row.expiresAt))), \"answer\": \(optional(row.answer)), "
            + "\"minutes\": \(row.minutes.map { "\($0)" } ?? "null")}"
    }
}
