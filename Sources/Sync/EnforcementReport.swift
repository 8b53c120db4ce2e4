import Policy

/// One line of an `enforcement_status` report (docs/sync.md#enforcement-report, docs/sync.md).
public struct EnforcementResult: Codable, Equatable, Sendable {
    public let category: String
    public let status: String
    public let framework: String
    public let detail: String

    init(_ category: String, _ status: Status, _ detail: String = "") {
        self.category = category
        self.status = status.rawValue
        framework = "phosra-gate"
        self.detail = detail
    }

    public enum Status: String, Sendable { case enforced, partial, failed, unsupported }
}

/// What the gateway tells the API after applying a policy version: one result per rule
/// category the policy sets, and only those (the table of docs/sync.md#enforcement-report).
public enum EnforcementReport {
    /// `listed`: the categories the gateway has lists for.
    public static func results(
        for policy: CompiledPolicy, rules: PolicyRules, listed: Set<Category>, services: ServiceCatalogue = .empty
    ) -> [EnforcementResult] {
        var results: [EnforcementResult] = []
        let web = policy.webFilter
        let notes = rules.notes
        if !web.level.trimmingWhitespace().isEmpty {
            var problems: [String] = []
            if let unknown = notes.unknownLevel { problems.append("unknown level \"\(unknown)\" enforced as moderate") }
            let missing = rules.level.categories.filter { !listed.contains($0) }
            if !missing.isEmpty { problems.append("no list for " + missing.map(\.id).joined(separator: ", ")) }
            results.append(line("web_filter_level", problems, enforced: "level \(rules.level)"))
        }
        if web.safeSearch { results.append(EnforcementResult("web_safesearch", .enforced)) }
        if !web.blockedCategories.isEmpty {
            var problems: [String] = notes.unknownCategories.map { "unknown category \"\($0)\"" }
            let named = web.blockedCategories.compactMap(Category.init(name:))
            let missing = Array(Set(named.filter { !listed.contains($0) })).sorted()
            if !missing.isEmpty { problems.append("no list for " + missing.map(\.id).joined(separator: ", ")) }
            results.append(line("web_category_block", problems))
        }
        if !web.blockedDomains.isEmpty {
            results.append(line("web_custom_blocklist", notes.skippedBlocked.map { "skipped \($0)" }))
        }
        if !web.allowedDomains.isEmpty {
            results.append(line("web_custom_allowlist", notes.skippedAllowed.map { "skipped \($0)" }))
        }
        if !policy.screenTime.downtimeWindows.isEmpty {
            results.append(line("time_downtime", notes.voidWindows + notes.unknownDays))
        }
        if policy.screenTime.schedule != nil {
            results.append(line("time_scheduled_hours", notes.ignoredHalves))
        }
        if policy.screenTime.dailyLimitMinutes > 0 {
            results.append(
                EnforcementResult(
                    "time_daily_limit", .partial,
                    "minutes online estimated from network activity; background services not counted"))
        }
        if policy.privacy.dataSharingRestricted {
            results.append(
                listed.contains(.ads)
                    ? EnforcementResult("privacy_data_sharing", .enforced, "ads and trackers category blocked")
                    : EnforcementResult("privacy_data_sharing", .failed, "no list for ads"))
        }
        return results + apps(policy, services)
    }

    /// The app rows (docs/services.md): blocked apps by their services, and what a
    /// network gateway cannot do.
    static func apps(_ policy: CompiledPolicy, _ services: ServiceCatalogue) -> [EnforcementResult] {
        var results: [EnforcementResult] = []
        let blocked = policy.contentFilter.blockedApps
        if !blocked.isEmpty {
            let unknown = blocked.filter { services.service(forBundle: $0) == nil }
            results.append(
                line(
                    "content_block_title", unknown.isEmpty ? [] : ["no service for " + unknown.joined(separator: ", ")])
            )
        }
        if policy.contentFilter.allowlistMode {
            results.append(
                EnforcementResult(
                    "content_allowlist_mode", .unsupported,
                    "a network gateway cannot tell apps apart from the rest of the web"))
        }
        let limits = policy.screenTime.perAppLimits
        if !limits.isEmpty {
            var problems: [String] = []
            let unknown = limits.map(\.bundleID).filter { services.service(forBundle: $0) == nil }
            if !unknown.isEmpty { problems.append("no service for " + unknown.joined(separator: ", ")) }
            let negative = limits.filter { $0.dailyMinutes < 0 }.map(\.bundleID)
            if !negative.isEmpty { problems.append("negative minutes ignored for " + negative.joined(separator: ", ")) }
            results.append(
                line(
                    "time_per_app_limit", problems,
                    enforced: "daily minutes per app counted from network use across the profile's devices"))
        }
        let dm = policy.social.dmRestriction.lowercased()
        if !dm.isEmpty {
            switch dm {
            case "none": results.append(EnforcementResult("dm_restriction", .enforced, "messaging services blocked"))
            case "everyone": results.append(EnforcementResult("dm_restriction", .enforced, "nothing to block"))
            default:
                results.append(
                    EnforcementResult(
                        "dm_restriction", .partial,
                        "\(dm): a network gateway cannot tell contacts apart; nothing blocked"))
            }
        }
        let multiplayer = policy.social.multiplayerMode.lowercased()
        if !multiplayer.isEmpty {
            results.append(
                ["off", "none", "disabled"].contains(multiplayer)
                    ? EnforcementResult("social_multiplayer", .enforced, "multiplayer services blocked")
                    : EnforcementResult(
                        "social_multiplayer", .partial, "\(multiplayer) is not enforced; nothing blocked"))
        }
        return results
    }

    /// The report for a policy the gateway refused (an invalid 200): it keeps enforcing
    /// the last good one.
    public static func rejected(reason: String, keeping version: Int) -> [EnforcementResult] {
        [EnforcementResult("web_filter", .failed, "\(reason); still enforcing version \(version)")]
    }

    private static func line(_ category: String, _ problems: [String], enforced: String = "") -> EnforcementResult {
        problems.isEmpty
            ? EnforcementResult(category, .enforced, enforced)
            : EnforcementResult(category, .partial, problems.joined(separator: "; "))
    }
}
