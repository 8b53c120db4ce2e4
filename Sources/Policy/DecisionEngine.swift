import DomainMatch
import Zoneinfo

/// "What happens to this name, for this client, now?" (docs/decisions.md#the-decision-order) — asked by the DNS proxy
/// and the HTTP proxy alike. Knows nothing of sockets. Immutable: a new policy, list set
/// or configuration is a new engine, built aside and swapped whole.
public final class DecisionEngine<Categories: NameMatcher>: Sendable {
    public let system: SystemRules
    public let categories: CategorySet<Categories>
    public let zone: ZoneRules
    public let profiles: ProfileTable
    /// The apps as network services (docs/services.md).
    public let services: ServiceCatalogue

    public init(
        system: SystemRules, categories: CategorySet<Categories>, zone: ZoneRules, profiles: ProfileTable,
        services: ServiceCatalogue = .empty
    ) {
        self.system = system
        self.categories = categories
        self.zone = zone
        self.profiles = profiles
        self.services = services
    }

    /// Decides `name` for `client` at `instant` (unix seconds), with its profile's budgets
    /// and overrides.
    public func decide(_ name: DomainName, client: Client, at instant: Int64) -> Decision {
        decide(name, profile: profiles.choose(client), at: instant, local: zone.localDateTime(at: instant))
    }

    /// Decides `name` for a device of `profile` at `instant` (unix seconds, whose wall
    /// clock is `local`): its rules, its minutes per service and the parent's overrides.
    /// `applyCutoff: false` skips the pause and steps 2, 2b and 2c, for names met inside an
    /// answer (a CNAME chain) rather than asked for.
    public func decide(
        _ name: DomainName, profile: Profile, at instant: Int64, local: LocalDateTime, applyCutoff: Bool = true
    ) -> Decision {
        decide(
            name, rules: profile.rules, local: local, applyCutoff: applyCutoff, usage: profile.usage,
            overrides: profile.overrides, instant: instant)
    }

    /// The rules alone, without a profile's overrides: `usage` is the profile's minutes
    /// per service (nil: no budget is spent).
    public func decide(
        _ name: DomainName, rules: PolicyRules, local: LocalDateTime, applyCutoff: Bool = true,
        usage: ServiceUsage? = nil
    ) -> Decision {
        decide(name, rules: rules, local: local, applyCutoff: applyCutoff, usage: usage, overrides: .none, instant: 0)
    }

    /// The rules of docs/decisions.md#the-decision-order in order; the first that applies
    /// wins. The overrides' times are compared with `instant`.
    private func decide(
        _ name: DomainName, rules: PolicyRules, local: LocalDateTime, applyCutoff: Bool, usage: ServiceUsage?,
        overrides: Overrides, instant: Int64
    ) -> Decision {
        let ip = IPAddress.literal(name)
        let own = system.matcher.match(name)

        // 1. The API and `always_allow` first: a gateway that cannot reach its API, or a
        //    parent's must-have site, must never be cut off.
        let systemDepth = depth(name, own[SystemRules.systemList], ip, system.systemIPs)
        if systemDepth > 0 { return Decision(.allow, .system, suffixOf: name, labels: systemDepth) }
        // The catalogue is asked at most once, and only when a step needs it.
        var matched: (service: Int, depth: Int)??
        let timed = applyCutoff
        let downtimeAllowed =
            timed && depth(name, own[SystemRules.downtimeAllowList], ip, system.downtimeAllowIPs) > 0
        // A pause comes right after the system names: everything else stops but the
        // always-allowed apps, as at a cutoff (and unlike a cutoff, `downtime_allow` too).
        let overridden = !overrides.isEmpty
        if timed, overridden, overrides.pause(at: instant) != nil, !alwaysAllowedService(name, rules, &matched) {
            return Decision(.block, .paused)
        }
        // 2. Time before lists: in downtime nothing but `downtime_allow` gets through, not
        //    even a parent-allowed site.
        //    An always-allowed app's service passes too (Phone, Messages, Maps), and
        //    nothing is cut off while the parent's extension lasts.
        if timed, !downtimeAllowed, let cutoff = rules.time.cutoff(at: local),
            !alwaysAllowedService(name, rules, &matched), !(overridden && overrides.extension(at: instant) != nil)
        {
            return Decision(.block, cutoff == .downtime ? .downtime : .schedule)
        }
        // A parent's exception on the gateway lifts the budget, the parent's lists, the
        // blocked apps and the categories: never the pause, a cutoff or circumvention.
        let exception = overridden ? overrides.exception(for: name, at: instant) : nil
        // 2b. A spent budget, until local midnight: like a cutoff, a parent allow does not
        //     reopen it; the parent's bonus minutes of the day add to it.
        if timed, !downtimeAllowed, exception == nil, let usage, !rules.appLimits.isEmpty,
            let found = service(name, &matched)
        {
            let app = services.services[found.service]
            if var limit = rules.dailyMinutes(for: app) {
                let day = local.daysSince1970
                if overridden { limit += overrides.bonusMinutes(app.id, day: day, at: instant) }
                if usage.minutes(app.id, day: day) >= limit { return Decision(.block, .limit, rule: app.id) }
            }
        }
        // 2c. The daily limit, until local midnight: the minutes online of the profile's
        //     devices together; what spends none (the background names, the always-allowed
        //     apps) keeps working, so push, calls and maps do not stop with it.
        if timed, rules.dailyLimitMinutes > 0, let usage, own[SystemRules.backgroundList] == 0,
            reachedDailyLimit(rules, usage, overrides: overridden ? overrides : nil, local: local, instant: instant),
            !alwaysAllowedService(name, rules, &matched)
        {
            return Decision(.block, .dailyLimit)
        }
        // 3. The parent's own lists: the most specific entry wins, allow on a tie.
        let parent = rules.parent.match(name)
        let allowDepth = depth(name, parent[PolicyRules.allowList], ip, rules.allowedIPs)
        let blockDepth = depth(name, parent[PolicyRules.blockList], ip, rules.blockedIPs)
        if exception == nil, blockDepth > allowDepth {
            return Decision(.block, .blockedDomain, suffixOf: name, labels: blockDepth)
        }

        // 3b. Blocked apps: a parent allow at least as specific as the service's domain
        //     lifts it (allowing `youtube.com` reopens YouTube; allowing `google.com` does not).
        if exception == nil, rules.blocksServices, let found = service(name, &matched), allowDepth < found.depth,
            rules.blocks(services.services[found.service])
        {
            return Decision(.block, .service, rule: services.services[found.service].id)
        }

        // 4. Circumvention: a parent allow lifts it only when at least as specific, so
        //    allowing icloud.com does not reopen mask.icloud.com.
        let listed = categories.matcher.match(name)
        if system.options.blockBypass {
            let builtIn = own[SystemRules.bypassList]
            let proxy = rules.selectsProxy ? listed[Category.proxy.rawValue] : 0
            let deepest = max(builtIn, proxy)
            if deepest > 0, allowDepth < deepest {
                return Decision(
                    .block, .circumvention, suffixOf: name, labels: deepest, category: proxy > builtIn ? .proxy : nil)
            }
        }
        // 5. Categories, in docs/decisions.md#categories's order, unless the parent allowed the name.
        if allowDepth == 0, exception == nil {
            for category in rules.categories where listed[category.rawValue] > 0 {
                return Decision(
                    .block, .category, suffixOf: name, labels: listed[category.rawValue], category: category)
            }
        }
        // 6. Safe search, also for parent-allowed names.
        if rules.safeSearch, let target = SafeSearch.target(for: name, strictYouTube: rules.strictYouTube) {
            return Decision(.rewrite, .safeSearch, target: target)
        }
        // 7. Allowed.
        if let exception, case .exception(let entry) = exception.kind {
            return Decision(.allow, .exception, suffixOf: name, labels: entry.labelCount)
        }
        if allowDepth > 0 { return Decision(.allow, .allowedDomain, suffixOf: name, labels: allowDepth) }
        return Decision(.allow, .default)
    }

    /// The service `name` belongs to, from `matched` once the catalogue was asked.
    private func service(
        _ name: DomainName, _ matched: inout (service: Int, depth: Int)??
    ) -> (
        service: Int, depth: Int
    )? {
        if let matched { return matched }
        let found = services.match(name)
        matched = .some(found)
        return found
    }

    private func alwaysAllowedService(
        _ name: DomainName, _ rules: PolicyRules, _ matched: inout (service: Int, depth: Int)??
    ) -> Bool {
        guard let found = service(name, &matched) else { return false }
        return rules.alwaysAllows(services.services[found.service])
    }

    /// `name` was used by a device of `profile` (asked for and answered, or carried by a
    /// connection): a minute of its service, if it has one (docs/services.md#budgets), and,
    /// when `online`, a minute online unless the name is background, a system name or an
    /// always-allowed app's (docs/services.md#minutes-online). Unfiltered profiles spend
    /// nothing.
    public func recordUse(
        of name: DomainName, by profile: Profile, at instant: Int64, local: LocalDateTime, online: Bool = true
    ) {
        guard profile.rules.filtered else { return }
        let day = local.daysSince1970
        let found = services.match(name)
        if let found { profile.usage.record(services.services[found.service].id, at: instant, day: day) }
        // Most names of a minute come after its first: one look at the minute, no match.
        guard online, !profile.usage.isCounted(ServiceUsage.online, at: instant, day: day) else { return }
        if let found, profile.rules.alwaysAllows(services.services[found.service]) { return }
        guard !system.isQuiet(name) else { return }
        profile.usage.record(ServiceUsage.online, at: instant, day: day)
    }

    /// Whether the profile's minutes online on `local`'s day reached its daily limit and
    /// the parent's bonus minutes of that day.
    public func reachedDailyLimit(
        _ rules: PolicyRules, _ usage: ServiceUsage, overrides: Overrides?, local: LocalDateTime, instant: Int64
    ) -> Bool {
        guard rules.dailyLimitMinutes > 0 else { return false }
        let day = local.daysSince1970
        let limit = rules.dailyLimitMinutes + (overrides?.dailyBonusMinutes(day: day, at: instant) ?? 0)
        return usage.onlineMinutes(day: day) >= limit
    }

    /// Whether `name` belongs to a service with a budget under `rules`, or the rules have
    /// a daily limit: its answers then live at most a minute in a device's cache, so the
    /// device asks again (a minute counted) and a spent budget or limit takes effect there
    /// within a minute.
    public func hasBudget(_ name: DomainName, rules: PolicyRules) -> Bool {
        if rules.dailyLimitMinutes > 0 { return true }
        guard !rules.appLimits.isEmpty, let found = services.match(name) else { return false }
        return rules.dailyMinutes(for: services.services[found.service]) != nil
    }

    /// Each profile's budgets: service id → daily minutes (for `status` and the
    /// notifications), and its daily limit under `ServiceUsage.online`, each with the
    /// parent's bonus minutes in force at `instant` (unix seconds).
    public func budgets(at instant: Int64) -> [String: [String: Int]] {
        var out: [String: [String: Int]] = [:]
        let day = zone.localDateTime(at: instant).daysSince1970
        for profile in profiles.profiles where profile.rules.dailyLimitMinutes > 0 {
            out[profile.name, default: [:]][ServiceUsage.online] =
                profile.rules.dailyLimitMinutes + profile.overrides.dailyBonusMinutes(day: day, at: instant)
        }
        for profile in profiles.profiles where !profile.rules.appLimits.isEmpty {
            for service in services.services {
                if let minutes = profile.rules.dailyMinutes(for: service) {
                    out[profile.name, default: [:]][service.id] =
                        minutes + profile.overrides.bonusMinutes(service.id, day: day, at: instant)
                }
            }
        }
        return out
    }

    /// The label depth of a list hit, where an IP literal name counts as its full depth.
    private func depth(_ name: DomainName, _ listed: Int, _ ip: IPAddress?, _ ips: Set<IPAddress>) -> Int {
        if let ip, ips.contains(ip) { return name.labelCount }
        return listed
    }
}

extension IPAddress {
    /// The address a name spells, which IP entries in lists match: a dotted quad
    /// (`1.2.3.4`), or an IPv6 literal carried as one label (how the HTTP proxy asks about
    /// `CONNECT [2001:db8::1]:443`; no hostname has a colon).
    static func literal(_ name: DomainName) -> IPAddress? {
        switch name.labelCount {
        case 4:
            guard let last = name.bytes.last, last >= UInt8(ascii: "0"), last <= UInt8(ascii: "9") else { return nil }
            return IPAddress(name.description)
        case 1:
            guard name.bytes.contains(UInt8(ascii: ":")) else { return nil }
            return IPAddress(name.description)
        default:
            return nil
        }
    }
}
