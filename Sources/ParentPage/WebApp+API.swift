import Policy
import Store
import Zoneinfo

/// The JSON API under `/api/` (docs/parent-page.md#api): what the page's forms do, for a
/// script or a phone's shortcut, on the same session and CSRF rules.
extension WebApp {
    func api(_ request: WebRequest, segments: [String]) throws -> WebResponse {
        let client = request.client.description
        switch (request.method, segments.count, segments.first) {
        case ("GET", 1, "profiles"):
            return .json(200, "{\"profiles\": [" + (try cards().map(profileJSON).joined(separator: ", ")) + "]}")
        case ("GET", 3, "profiles") where segments[2] == "hits":
            let profile = try profile(named: segments[1])
            let limit = min(max(Int(request.query["limit"] ?? "") ?? 50, 1), 500)
            let before = Int64(request.query["before"] ?? "") ?? .max
            let rows = try store.history(
                profile: profile.name, before: before, limit: limit, client: request.query["device"],
                reason: request.query["reason"], domain: request.query["name"])
            return .json(200, "{\"hits\": [" + rows.map(hitJSON).joined(separator: ", ") + "]}")
        case ("POST", 3, "profiles"):
            let profile = try profile(named: segments[1])
            let body = try decode(ChangeBody.self, request)
            switch segments[2] {
            case "pause":
                let end = try end(minutes: body.minutes, until: body.until, open: true)
                return .json(200, overrideJSON(try pause(profile, end: end, client: client)))
            case "resume":
                try resume(profile, client: client)
                return .json(200, "{}")
            case "extend":
                let added = try extend(profile, minutes: try minutes(body.minutes), app: body.app, client: client)
                return .json(200, overrideJSON(added))
            case "exceptions":
                guard let name = body.name else { throw Refusal(400, "give the name to allow") }
                let end =
                    try end(minutes: body.minutes, until: body.until, open: true)
                    ?? Times.nextMidnight(after: now, zone: household.currentEngine().zone)
                return .json(200, overrideJSON(try except(profile, name: name, end: end, client: client)))
            default: throw Refusal(404, "no such action: \(segments[2])")
            }
        case ("DELETE", 2, "overrides"):
            guard let id = Int64(segments[1]) else { throw Refusal(404, "no override \(segments[1])") }
            try removeOverride(id: id, client: client)
            return .json(200, "{}")
        case ("GET", 1, "requests"):
            let rows = try store.waitingRequests(now: now)
            return .json(200, "{\"requests\": [" + rows.map(requestJSON).joined(separator: ", ") + "]}")
        case ("POST", 2, "requests"):
            guard let id = Int64(segments[1]) else { throw Refusal(404, "no request \(segments[1])") }
            let body = try decode(AnswerBody.self, request)
            let grant = try grant(answer: body.answer, value: body.until, minutes: body.minutes, always: body.always)
            return .json(200, requestJSON(try answer(request: id, grant: grant, client: client)))
        case ("GET", 1, "summaries"):
            let rows = try store.summaries(sinceDay: summaryHorizon)
            return .json(200, "{\"summaries\": [" + rows.map(\.body).joined(separator: ", ") + "]}")
        case ("GET", 1, "devices"):
            return .json(200, "{\"devices\": [" + (try devices().map(deviceJSON).joined(separator: ", ")) + "]}")
        case ("POST", 2, "devices") where segments[1] == "seen":
            let body = try decode(SeenBody.self, request)
            var through = now
            if let text = body.through {
                guard let at = Times.parseRFC3339(text) else { throw Refusal(400, "through must be an RFC 3339 time") }
                through = min(at, now)
            }
            try markDevicesSeen(through: through, client: client)
            return .json(200, "{\"seen_through\": \(Escape.json(Timestamp.rfc3339(through)))}")
        case ("POST", 2, "devices"):
            let body = try decode(DeviceBody.self, request)
            try saveDevice(mac: segments[1], name: body.name, profile: body.profile, client: client)
            return .json(200, "{}")
        default:
            throw Refusal(404, "no such API: \(request.method) /api/" + segments.joined(separator: "/"))
        }
    }

    struct ChangeBody: Decodable {
        var minutes: Int?
        var until: String?
        var app: String?
        var name: String?
    }

    /// `{"answer": "allow", "minutes": 15}`, `{"answer": "allow", "until": "today"}`,
    /// `{"answer": "allow", "always": true}` (a site) or `{"answer": "deny"}`.
    struct AnswerBody: Decodable {
        var answer: String?
        var minutes: Int?
        var until: String?
        var always: Bool?
    }

    struct SeenBody: Decodable {
        var through: String?
    }

    struct DeviceBody: Decodable {
        var profile: String?
        var name: String?
    }

    private func decode<T: Decodable>(_ type: T.Type, _ request: WebRequest) throws(Refusal) -> T {
        guard request.body.isEmpty || request.isJSON else { throw Refusal(415, "send application/json") }
        do { return try JSONBody.decode(type, from: request.body) } catch {
            throw Refusal(400, "the body is not the JSON this call takes")
        }
    }

    /// Every profile's card now (the unfiltered `none` left out).
    func cards() throws -> [(card: ProfileCard, today: (queries: Int, blocks: Int), devices: [ClientSighting])] {
        let engine = household.currentEngine()
        let instant = now
        let midnight = Times.startOfDay(instant, zone: engine.zone)
        let seen = try store.sightings(since: instant - 3_600)
        return try engine.profiles.profiles.filter { $0.name != Profile.noneName }.map { profile in
            let card = ProfileCard(profile, engine: engine, at: instant)
            let today = try store.dayCounts(profile: profile.name, since: max(midnight, instant - 86_400))
            return (card, today, seen.filter { $0.profile == profile.name })
        }
    }

    private func profileJSON(
        _ entry: (card: ProfileCard, today: (queries: Int, blocks: Int), devices: [ClientSighting])
    ) -> String {
        let card = entry.card
        let budgets = card.budgets.map {
            "{\"app\": \(Escape.json($0.app)), \"used_minutes\": \($0.usedMinutes), \"limit_minutes\": \($0.limitMinutes)}"
        }
        let devices = entry.devices.map { sighting in
            "{\"client\": \(Escape.json(sighting.client)), \"address\": \(optional(sighting.address)), "
                + "\"mac\": \(optional(sighting.mac)), \"last_seen\": \(Escape.json(Timestamp.rfc3339(sighting.lastSeen)))}"
        }
        return "{\"name\": \(Escape.json(card.name)), \"state\": \"\(card.state.rawValue)\", "
            + "\"until\": \(optional(card.until.map(Timestamp.rfc3339))), "
            + "\"overrides\": [\(card.overrides.map(overrideJSON).joined(separator: ", "))], "
            + "\"budgets\": [\(budgets.joined(separator: ", "))], "
            + "\"daily_limit\": \(card.daily.map { "{\"used_minutes\": \($0.usedMinutes), \"limit_minutes\": \($0.limitMinutes)}" } ?? "null"), "
            + "\"today\": {\"queries\": \(entry.today.queries), \"blocks\": \(entry.today.blocks)}, "
            + "\"devices\": [\(devices.joined(separator: ", "))]}"
    }

    func overrideJSON(_ override: Override) -> String {
        var text = "{\"id\": \(override.id), \"profile\": \(Escape.json(override.profile)), "
        text += "\"kind\": \"\(override.kindName)\", "
        switch override.kind {
        case .pause, .extension: break
        case .appBonus(let service, let minutes, _):
            text += "\"app\": \(Escape.json(service)), \"minutes\": \(minutes), "
        case .dailyBonus(let minutes, _): text += "\"minutes\": \(minutes), "
        case .exception(let name): text += "\"name\": \(Escape.json(name.description)), "
        }
        text += "\"start\": \(Escape.json(Timestamp.rfc3339(override.start))), "
        text +=
            "\"until\": \(optional(override.end.map(Timestamp.rfc3339))), \"set_by\": \(Escape.json(override.setBy))}"
        return text
    }

    private func hitJSON(_ row: HistoryRow) -> String {
        "{\"name\": \(Escape.json(row.domain)), \"reason\": \(Escape.json(row.reason)), "
            + "\"category\": \(optional(row.category)), \"device\": \(Escape.json(row.client)), \"count\": \(row.count), "
            + "\"first_seen\": \(Escape.json(Timestamp.rfc3339(row.firstSeen))), "
            + "\"last_seen\": \(Escape.json(Timestamp.rfc3339(row.lastSeen)))}"
    }

    func optional(_ text: String?) -> String { text.map(Escape.json) ?? "null" }
}
