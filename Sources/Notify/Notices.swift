import Store

/// The words and ids of each event (docs/requests-and-notifications.md#events). `page` is
/// the parent's page (`https://host:8443/`), where a tap on a notification goes.
public enum Notices {
    /// A child's request: its id makes it once; a tap opens it on the page.
    public static func ask(_ request: RequestRow, what: String, page: String?) -> Notice {
        let note = request.note.isEmpty ? "No note." : "“" + request.note + "”"
        return Notice(
            event: .ask, id: "ask:\(request.id)", time: request.askedAt, profile: request.profile,
            device: request.device, title: "\(request.profile) asks: \(what)",
            message: "\(note)\nFrom \(request.device). Answer on the gateway's page.",
            click: page.map { $0 + "#request-\(request.id)" }, priority: 4, tags: ["raising_hand"],
            data: ["request": "\(request.id)", "kind": request.kind, "target": request.target ?? ""])
    }

    /// A device the gateway never saw; `name` its DHCP host name or the parent's name for
    /// it, when known.
    public static func newDevice(_ sighting: ClientSighting, name: String?, page: String?) -> Notice {
        let called = name.map { "“\($0)” " } ?? ""
        var facts = [String]()
        if let mac = sighting.mac { facts.append("MAC \(mac)") }
        if let address = sighting.address { facts.append("address \(address)") }
        return Notice(
            event: .newDevice, id: "device:\(sighting.client)", time: sighting.firstSeen, profile: sighting.profile,
            device: sighting.client, title: "New device \(called)on the network",
            message: "\(called)\(facts.joined(separator: ", ")); filtered as \(sighting.profile) until you assign it.",
            click: page.map { $0 + "devices" }, priority: 3, tags: ["new"],
            data: ["mac": sighting.mac ?? "", "address": sighting.address ?? "", "name": name ?? ""])
    }

    /// An app's budget, or the day's time online (`app` nil), used up on local `day`.
    public static func budgetSpent(
        profile: String, app: String?, appName: String?, used: Int, limit: Int, day: Int, now: Int64, page: String?
    ) -> Notice {
        let what = app == nil ? "time online" : "\(appName ?? app ?? "") time"
        return Notice(
            event: .budgetSpent, id: "budget:\(profile):\(app ?? "online"):\(day)", time: now, profile: profile,
            title: "\(profile): today's \(what) is used up",
            message: "\(used) of \(limit) minutes used; blocked until midnight unless you give more time.",
            click: page, priority: 3, tags: ["hourglass"],
            data: ["app": app ?? "", "used_minutes": "\(used)", "limit_minutes": "\(limit)"])
    }

    /// One device tried `count` times in the window to get around the filter.
    public static func circumvention(
        profile: String, device: String, count: Int, names: [String], windowStart: Int64, now: Int64, page: String?
    ) -> Notice {
        let examples = names.prefix(3).joined(separator: ", ")
        return Notice(
            event: .circumvention, id: "circumvention:\(device):\(windowStart)", time: now, profile: profile,
            device: device, title: "\(profile): repeated attempts to get around the filter",
            message: "\(device) tried \(count) times in 10 minutes" + (examples.isEmpty ? "." : " (\(examples))."),
            click: page, priority: 4, tags: ["warning"], data: ["count": "\(count)", "names": examples])
    }

    /// A child's daily summary: `title` and `lines` are the summary's words.
    public static func summary(
        profile: String, day: Int, title: String, lines: [String], now: Int64, page: String?
    ) -> Notice {
        Notice(
            event: .summary, id: "summary:\(profile):\(day)", time: now, profile: profile, title: title,
            message: lines.joined(separator: "\n"), click: page.map { $0 + "summaries#summary-\(profile)-\(day)" },
            priority: 2, tags: ["bar_chart"], data: ["day": "\(day)"])
    }

    /// A profile's sync has failed for an hour or more; one event per outage (its id is
    /// the last success).
    public static func syncFailing(
        profile: String, lastSuccess: Int64?, error: String, now: Int64, page: String?
    ) -> Notice {
        Notice(
            event: .trouble, id: "trouble:sync:\(profile):\(lastSuccess ?? 0)", time: now, profile: profile,
            title: "Gateway: the policy sync has failed for an hour",
            message: "\(profile): \(error). The gateway enforces the last policy it has.", click: page,
            priority: 4, tags: ["rotating_light"], data: ["check": "sync"])
    }

    /// One of the gateway's own checks has failed since `since` (`CheckWatch`); one event
    /// per outage.
    public static func checkFailing(_ check: FailingCheck, since: Int64, now: Int64, page: String?) -> Notice {
        Notice(
            event: .trouble, id: "trouble:\(check.key):\(since)", time: now,
            title: "Gateway: the \(check.check) check fails",
            message: "\(check.what). To fix: \(check.fix).", click: page, priority: 4, tags: ["rotating_light"],
            data: ["check": check.check, "subject": check.subject])
    }

    /// The category lists are older than their limit; one event per lists' date.
    public static func listsOld(newest: Int64, maxAgeDays: Int, now: Int64, page: String?) -> Notice {
        let days = (now - newest) / 86_400
        return Notice(
            event: .trouble, id: "trouble:lists:\(newest)", time: now,
            title: "Gateway: the category lists are \(days) days old",
            message: "Lists older than \(maxAgeDays) days miss new sites. Run phosra-gate blocklists update.",
            click: page, priority: 3, tags: ["rotating_light"], data: ["check": "lists"])
    }
}
