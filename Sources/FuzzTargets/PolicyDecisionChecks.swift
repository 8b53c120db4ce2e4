import DomainMatch
import Policy
import Zoneinfo

/// What every decision must satisfy, and what the parent's own lists imply.
enum PolicyDecisionChecks {
    /// `rule` is `name` or one of its parents, on a label boundary.
    static func isSuffix(_ rule: String?, of name: DomainName) -> Bool {
        guard let rule, !rule.isEmpty else { return false }
        return name.description == rule || name.description.hasSuffix("." + rule)
    }

    /// Under the API host, which the default system rules always allow.
    static func isSystem(_ name: DomainName) -> Bool {
        name.description == "phosra-api.fly.dev" || name.description.hasSuffix(".phosra-api.fly.dev")
    }

    static func wellFormed(
        _ decision: Decision, name: DomainName, rules: PolicyRules, cutoff: CutoffKind?
    ) throws(PropertyViolation) {
        let problem = "\(name): \(decision)"
        switch decision.reason {
        case .system, .allowedDomain:
            try check(decision.action == .allow && isSuffix(decision.rule, of: name), problem)
        case .downtime:
            try check(decision.action == .block && cutoff == .downtime, problem + " outside downtime")
        case .schedule:
            try check(decision.action == .block && cutoff == .schedule, problem + " inside the schedule")
        case .blockedDomain, .circumvention:
            try check(decision.action == .block && isSuffix(decision.rule, of: name), problem)
        case .category:
            guard let category = decision.category else { throw PropertyViolation(problem: problem + " (no category)") }
            try check(decision.action == .block && isSuffix(decision.rule, of: name), problem)
            try check(rules.categories.contains(category), problem + " (category not selected)")
        case .safeSearch:
            try check(decision.action == .rewrite && decision.target != nil, problem)
        case .default:
            try check(decision.action == .allow && decision.rule == nil && decision.target == nil, problem)
        case .service:
            try check(decision.action == .block && decision.rule?.isEmpty == false, problem)
        case .ipLiteral, .port, .sni, .tlsUnreadable, .localDestination:
            throw PropertyViolation(problem: problem + " (a proxy-only reason from decide)")
        case .limit, .dailyLimit:
            throw PropertyViolation(problem: problem + " (a spent budget, with no minutes spent)")
        case .paused, .exception:
            throw PropertyViolation(problem: problem + " (a parent's override, with none set)")
        }
    }

    /// A name the parent blocked and did not also allow is blocked by that entry; a name
    /// the parent allowed and did not also block is never blocked (outside a cutoff).
    static func parentLists<M: NameMatcher>(
        _ policy: CompiledPolicy, rules: PolicyRules, engine: DecisionEngine<M>
    ) throws(PropertyViolation) {
        let blocked = entries(policy.webFilter.blockedDomains, kind: .block)
        let allowed = entries(policy.webFilter.allowedDomains, kind: .allow)
        let local = LocalDateTime(year: 2026, month: 1, day: 1)
        // Every entry counts for "also allowed"; the first 64 of each list are asked about.
        for entry in blocked.prefix(64) where !allowed.contains(entry) {
            guard let name = name(of: entry), !isSystem(name) else { continue }
            let decision = engine.decide(name, rules: rules, local: local, applyCutoff: false)
            try check(
                decision.reason == .blockedDomain && decision.rule == name.description,
                "blocked entry \(entry) decided \(decision)")
        }
        for entry in allowed.prefix(64) where !blocked.contains(entry) {
            guard let name = name(of: entry) else { continue }
            let decision = engine.decide(name, rules: rules, local: local, applyCutoff: false)
            try check(decision.action != .block, "allowed entry \(entry) decided \(decision)")
        }
    }

    static func entries(_ raw: [String], kind: ListKind) -> [ListEntry] {
        raw.compactMap { try? ListEntry.parse($0, kind: kind).get() }
    }

    /// The name a decision is asked for: the entry itself, an IPv4 address as its dotted
    /// quad, an IPv6 address as one label (as the HTTP proxy asks about `[2001:db8::1]`).
    static func name(of entry: ListEntry) -> DomainName? {
        switch entry {
        case .name(let name): return name
        case .ip(.v4): return try? QueryName.parse(entry.description)
        case .ip(.v6): return DomainName(wireLabels: [Array(entry.description.utf8)])
        }
    }

    /// The next boundary is a whole minute after the instant where the cutoff state
    /// changes, and it is the first such minute; a cutoff's end is a minute without one.
    static func boundaries(_ rules: PolicyRules, from instant: Int64, zone: ZoneRules) throws(PropertyViolation) {
        let state = rules.time.cutoff(at: zone.localDateTime(at: instant))
        if let next = rules.time.nextBoundary(after: instant, zone: zone) {
            try check(next > instant && next % 60 == 0, "boundary \(next) after \(instant)")
            try check(rules.time.cutoff(at: zone.localDateTime(at: next)) != state, "no change at boundary \(next)")
            let before = next - 60
            if before > instant {
                try check(
                    rules.time.cutoff(at: zone.localDateTime(at: before)) == state, "a change before boundary \(next)")
            }
        }
        if let end = rules.time.cutoffEnd(from: instant, zone: zone) {
            try check(end >= instant && rules.time.cutoff(at: zone.localDateTime(at: end)) == nil, "cutoff end \(end)")
        }
    }
}
