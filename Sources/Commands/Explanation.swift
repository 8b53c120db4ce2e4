import DomainMatch
import Gateway
import Policy
import Zoneinfo

/// One line that tells a parent why `check` decided what it did.
enum Explanation {
    static func line(_ decision: Decision, name: DomainName, rules: PolicyRules, context: Context) -> String {
        let rule = decision.rule.map { "\"\($0)\"" } ?? ""
        switch decision.reason {
        case .system:
            return "always allowed: \(rule) is the Phosra API host or on always_allow"
        case .downtime:
            return "inside a downtime window\(windows(rules))\(until(rules, context))"
        case .schedule:
            return "outside the allowed hours\(schedule(rules))\(until(rules, context))"
        case .blockedDomain:
            return "on the parent's blocked_domains as \(rule)"
        case .circumvention:
            let source = decision.category == .proxy ? "the proxy category list" : "the built-in bypass list"
            return "\(rule) on \(source) could take the device around the filter"
        case .category:
            return "\(rule) is on the \(decision.category?.id ?? "?") list"
        case .safeSearch:
            return "safe search is on: answered as \(decision.target?.description ?? "?")"
        case .allowedDomain:
            return "on the parent's allowed_domains as \(rule)"
        case .service:
            return "the app \(rule) is blocked (content_filter.blocked_apps, or social.dm_restriction / "
                + "multiplayer_mode for its kind): its domains are in the service catalogue"
        case .limit:
            return "the app \(rule) has spent its daily minutes (screen_time.per_app_limits): blocked until "
                + "local midnight, whatever the parent's lists say"
        case .dailyLimit:
            return "the profile's minutes online today reached its daily limit (screen_time.daily_limit_minutes, "
                + "estimated from network activity): blocked until local midnight, but for the background names "
                + "and the always-allowed apps"
        case .paused:
            return
                "the parent paused this profile on the gateway\(override(context.overrides.pause(at: context.instant), context))"
        case .exception:
            return "the parent's exception on the gateway allows \(rule)"
                + override(context.overrides.exception(for: name, at: context.instant), context)
        case .default:
            return "no rule matches"
        case .ipLiteral, .port, .sni, .tlsUnreadable, .localDestination:
            return decision.reasonText
        }
    }

    struct Context {
        let instant: Int64
        let zone: ZoneRules
        var overrides: Overrides = .none
    }

    /// ` until 19:30, set at 18:30 by page 192.168.1.20`: an override's end and origin.
    static func override(_ override: Override?, _ context: Context) -> String {
        guard let override else { return "" }
        let end = override.end.map { " until " + LocalText.format(context.zone.localDateTime(at: $0), minutes: true) }
        return (end ?? " until resumed") + ", set at "
            + LocalText.format(context.zone.localDateTime(at: override.start), minutes: true) + " by \(override.setBy)"
    }

    private static func until(_ rules: PolicyRules, _ context: Context) -> String {
        guard let end = rules.time.cutoffEnd(from: context.instant, zone: context.zone) else {
            return " for at least the coming week"
        }
        return " until " + LocalText.format(context.zone.localDateTime(at: end), minutes: true)
    }

    private static func windows(_ rules: PolicyRules) -> String {
        let texts = rules.time.windows.map { window -> String in
            let days =
                window.days.count == 7
                ? "every day"
                : Weekday.allCases.filter(window.days.contains).map(LocalText.dayName).joined(separator: ",")
            return "\(window.interval) \(days)"
        }
        return texts.isEmpty ? "" : " (" + texts.joined(separator: "; ") + ")"
    }

    private static func schedule(_ rules: PolicyRules) -> String {
        var parts: [String] = []
        if let weekday = rules.time.weekday { parts.append("weekdays \(weekday)") }
        if let weekend = rules.time.weekend { parts.append("weekends \(weekend)") }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")"
    }
}
