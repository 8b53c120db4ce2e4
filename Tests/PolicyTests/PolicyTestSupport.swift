import DomainMatch
import Zoneinfo

@testable import Policy

/// Builds engines from inline lists and policies, and names wall-clock times.
enum Fixture {
    static func names(_ list: [String]) -> [DomainName] { list.map { try! QueryName.parse($0) } }

    /// Small category lists standing in for the lists folder.
    static let lists: [Category: [String]] = [
        .adult: ["pornhub.com", "xvideos.com", "both-adult-and-social.example"],
        .gambling: ["bet365.com", "stake.com"],
        .social: ["tiktok.com", "facebook.com", "both-adult-and-social.example", "omegle.com"],
        .gaming: ["roblox.com", "fortnite.com"],
        .dating: ["tinder.com"],
        .drugs: ["erowid.org"],
        .violence: ["gore.example"],
        .piracy: ["thepiratebay.org"],
        .malware: ["coinhive.com"],
        .phishing: ["phish.example"],
        .proxy: ["nordvpn.com", "icloud-proxy.example", "mask.icloud.com"],
        .ads: ["doubleclick.net"],
    ]

    static func engine(
        lists: [Category: [String]] = Fixture.lists, options: DecisionOptions = DecisionOptions(),
        zone: ZoneRules = .utc, policy: CompiledPolicy
    ) -> (DecisionEngine<SetMatcher>, PolicyRules) {
        let rules = PolicyRules(policy)
        let categories = CategorySet(lists: lists.mapValues(names))
        let engine = DecisionEngine(
            system: SystemRules(options), categories: categories, zone: zone,
            profiles: ProfileTable(single: rules))
        return (engine, rules)
    }

    static func policy(
        level: String = "", safeSearch: Bool = false, blocked: [String] = [], allowed: [String] = [],
        categories: [String] = [], windows: [CompiledPolicy.DowntimeWindow] = [],
        schedule: CompiledPolicy.Schedule? = nil
    ) -> CompiledPolicy {
        var policy = CompiledPolicy()
        policy.version = 1
        policy.webFilter.level = level
        policy.webFilter.safeSearch = safeSearch
        policy.webFilter.blockedDomains = blocked
        policy.webFilter.allowedDomains = allowed
        policy.webFilter.blockedCategories = categories
        policy.screenTime.downtimeWindows = windows
        policy.screenTime.schedule = schedule
        return policy
    }

    /// 2026-11-30 is a Monday.
    static func at(_ day: Weekday, _ hour: Int, _ minute: Int = 0) -> LocalDateTime {
        let date = CivilCalendar.date(days: CivilCalendar.days(year: 2026, month: 11, day: 30) + day.rawValue - 1)
        return LocalDateTime(year: date.year, month: date.month, day: date.day, hour: hour, minute: minute)
    }

    static let mondayNoon = at(.monday, 12)
}

extension DecisionEngine {
    func decide(_ name: String, rules: PolicyRules, at local: LocalDateTime = Fixture.mondayNoon) -> Decision {
        decide(try! QueryName.parse(name), rules: rules, local: local)
    }
}

extension Decision {
    /// Compact form for table tests: `block blocked_domain:reddit.com`, `rewrite safe_search → x`.
    var short: String { description + (category.map { " [\($0.id)]" } ?? "") }
}
