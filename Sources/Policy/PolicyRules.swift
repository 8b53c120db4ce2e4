import DomainMatch

/// One profile's policy, compiled for deciding: the parent's lists in a small matcher of
/// their own (a policy change never rebuilds the category lists), the selected
/// categories, the time rules and the safe-search switch. Immutable; swapped whole.
public final class PolicyRules: Sendable {
    static let allowList = 0, blockList = 1

    public let version: Int
    public let policyID: String
    public let level: FilterLevel
    /// `blocked_categories` ∪ the level's, without `proxy`, in docs/decisions.md#categories's order.
    public let categories: [Category]
    /// Whether the level or `blocked_categories` select `proxy` (circumvention, docs/decisions.md#the-decision-order, step 4).
    public let selectsProxy: Bool
    public let safeSearch: Bool
    public let time: TimeRules
    public let notes: PolicyNotes
    /// False only for the rules of profile `none`: no inspection, no ECH removal (docs/dns.md#answer-inspection).
    public let filtered: Bool
    /// The next cutoff boundary, cached (answers' TTLs are capped by it).
    public let boundaries = BoundaryCache()
    let parent: LabelTrie
    let allowedIPs: Set<IPAddress>
    let blockedIPs: Set<IPAddress>
    /// `content_filter.blocked_apps` (docs/services.md#blocked-apps).
    public let blockedApps: Set<String>
    /// `screen_time.always_allowed_apps`: their services pass cutoffs.
    public let alwaysAllowedApps: Set<String>
    /// `social.dm_restriction = none`: every `messaging` service is blocked.
    public let blocksMessaging: Bool
    /// `social.multiplayer_mode` `off`, `none` or `disabled`: every `multiplayer` service is blocked.
    public let blocksMultiplayer: Bool
    /// `screen_time.per_app_limits`: daily minutes by bundle id (the smallest when one is
    /// named twice; 0 is a budget of no minutes). Negative values are left out.
    public let appLimits: [String: Int]
    /// `screen_time.daily_limit_minutes`: minutes online a day (docs/services.md#the-daily-limit);
    /// 0 (or less) is no limit.
    public let dailyLimitMinutes: Int
    /// `privacy.data_sharing_restricted`: the ads and trackers category is selected.
    public let restrictsDataSharing: Bool

    /// Whether the answer for a name decided `decision` has its CNAME chain inspected
    /// (docs/dns.md#answer-inspection), for a DNS client and the proxy alike: not for a name
    /// allowed outright (parent-allowed, system), nor for an unfiltered profile.
    public func inspectsAnswer(after decision: Decision) -> Bool {
        filtered && decision.reason != .allowedDomain && decision.reason != .system && decision.reason != .exception
    }

    public init(_ policy: CompiledPolicy, filtered: Bool = true) {
        self.filtered = filtered
        var notes = PolicyNotes()
        let web = policy.webFilter
        level = FilterLevel(web.level)
        if case .unknown(let raw) = level { notes.unknownLevel = raw }

        var selected = Set(level.categories)
        restrictsDataSharing = policy.privacy.dataSharingRestricted
        if restrictsDataSharing { selected.insert(.ads) }
        for name in web.blockedCategories {
            if let category = Category(name: name) {
                selected.insert(category)
            } else {
                notes.unknownCategories.append(name)
            }
        }
        selectsProxy = selected.contains(.proxy)
        categories = Category.allCases.filter { $0 != .proxy && selected.contains($0) }

        var allowed = ParsedList()
        var blocked = ParsedList()
        for raw in web.blockedDomains {
            if case .failure(let why) = blocked.add(raw, kind: .block) {
                notes.skippedBlocked.append(.init(entry: raw, reason: why.description))
            }
        }
        for raw in web.allowedDomains {
            if case .failure(let why) = allowed.add(raw, kind: .allow) {
                notes.skippedAllowed.append(.init(entry: raw, reason: why.description))
            }
        }
        parent = LabelTrie(lists: [allowed.names, blocked.names])
        allowedIPs = allowed.ips
        blockedIPs = blocked.ips
        safeSearch = web.safeSearch
        time = TimeRules.compile(policy.screenTime, notes: &notes)
        blockedApps = Set(policy.contentFilter.blockedApps)
        alwaysAllowedApps = Set(policy.screenTime.alwaysAllowedApps)
        blocksMessaging = policy.social.dmRestriction.lowercased() == "none"
        blocksMultiplayer = ["off", "none", "disabled"].contains(policy.social.multiplayerMode.lowercased())
        var limits: [String: Int] = [:]
        for limit in policy.screenTime.perAppLimits where limit.dailyMinutes >= 0 && !limit.bundleID.isEmpty {
            limits[limit.bundleID] = min(limits[limit.bundleID] ?? .max, limit.dailyMinutes)
        }
        appLimits = limits
        dailyLimitMinutes = max(policy.screenTime.dailyLimitMinutes, 0)
        version = policy.version
        policyID = policy.policyID
        self.notes = notes
    }

    /// The rules of profile `none` (docs/configuration.md#profiles) and of `initial_policy = none`: unfiltered
    /// but for circumvention.
    public static let unfiltered = PolicyRules(CompiledPolicy(), filtered: false)

    /// `initial_policy = strict` (docs/sync.md#polling): level strict, safe search on, no time rules.
    public static let initialStrict: PolicyRules = {
        var policy = CompiledPolicy()
        policy.webFilter.level = "strict"
        policy.webFilter.safeSearch = true
        return PolicyRules(policy)
    }()

    /// YouTube's strict restricted mode only for level strict (docs/decisions.md#safe-search).
    var strictYouTube: Bool { level == .strict }
}

/// What a profile enforces until its first policy arrives (`initial_policy`).
public enum InitialPolicy: String, CaseIterable, Sendable {
    /// Level strict, safe search on, no time rules: a new gateway filters from the start.
    case strict
    /// Unfiltered but for circumvention.
    case none

    public var rules: PolicyRules {
        switch self {
        case .strict: PolicyRules.initialStrict
        case .none: PolicyRules.unfiltered
        }
    }
}

extension PolicyRules {
    /// Whether any service can be blocked by these rules (else the catalogue is not asked).
    public var blocksServices: Bool { !blockedApps.isEmpty || blocksMessaging || blocksMultiplayer }

    /// Whether these rules block `service`: one of its bundle ids is a blocked app, or its
    /// kind is one `dm_restriction` or `multiplayer_mode` turns off.
    public func blocks(_ service: ServiceCatalogue.Service) -> Bool {
        (blocksMessaging && service.kind == .messaging) || (blocksMultiplayer && service.kind == .multiplayer)
            || service.bundleIDs.contains { blockedApps.contains($0) }
    }

    /// The daily minutes `service` may be used, when one of its bundle ids has a budget
    /// (the smallest of them: either platform's app spends the same service).
    public func dailyMinutes(for service: ServiceCatalogue.Service) -> Int? {
        guard !appLimits.isEmpty else { return nil }
        var found: Int?
        for bundle in service.bundleIDs {
            if let minutes = appLimits[bundle] { found = min(found ?? .max, minutes) }
        }
        return found
    }

    /// Whether one of `service`'s bundle ids is an always-allowed app.
    public func alwaysAllows(_ service: ServiceCatalogue.Service) -> Bool {
        service.bundleIDs.contains { alwaysAllowedApps.contains($0) }
    }
}
