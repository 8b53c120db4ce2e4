import DomainMatch
import Policy
import Zoneinfo

/// A CompiledPolicy document as the API or a local file gives it, compiled into rules and
/// asked about a fixed set of names at fixed instants, in UTC and in a zone with DST.
enum PolicyJSONTarget {
    static let target = FuzzTarget(
        "policy-json",
        "a document either decodes or names a path; compiled, every decision is well formed (its reason, "
            + "action, rule and category agree), a cutoff blocks, a parent-blocked name is blocked and a "
            + "parent-allowed one is not, and the next time boundary is where the cutoff changes"
    ) { input throws(PropertyViolation) in
        let policy: CompiledPolicy
        do throws(PolicyDecodingError) {
            policy = try CompiledPolicy.decode(input)
        } catch {
            try check(!error.path.isEmpty && !error.problem.isEmpty, "a decoding error without a path or problem")
            return
        }
        let rules = PolicyRules(policy)
        for zone in zones {
            let engine = DecisionEngine(
                system: system, categories: categories, zone: zone, profiles: ProfileTable(single: rules))
            for instant in instants {
                let local = zone.localDateTime(at: instant)
                let cutoff = rules.time.cutoff(at: local)
                for name in names {
                    let decision = engine.decide(name, client: .anonymous, at: instant)
                    try PolicyDecisionChecks.wellFormed(decision, name: name, rules: rules, cutoff: cutoff)
                    if cutoff != nil, !PolicyDecisionChecks.isSystem(name) {
                        try check(
                            decision.reason == .downtime || decision.reason == .schedule,
                            "\(name) at \(local): \(decision) during a cutoff")
                    }
                }
            }
        }
        try PolicyDecisionChecks.parentLists(policy, rules: rules, engine: engineUTC(rules))
        try PolicyDecisionChecks.boundaries(rules, from: instants[0], zone: .utc)
    }

    static func engineUTC(_ rules: PolicyRules) -> DecisionEngine<SetMatcher> {
        DecisionEngine(system: system, categories: categories, zone: .utc, profiles: ProfileTable(single: rules))
    }

    static let system = SystemRules(DecisionOptions())

    /// One listed name per category, so the category step has something to find.
    static let categories = CategorySet(
        lists: Dictionary(uniqueKeysWithValues: Category.allCases.map { ($0, [parse("\($0.id).example")]) }))

    static let zones = [ZoneRules.utc, (try? ZoneRules(posixTZ: "CET-1CEST,M3.5.0,M10.5.0/3")) ?? .utc]

    /// From Thursday 2026-01-01 00:00 UTC, steps of 13 h 7 min: every weekday, many hours.
    static let instants: [Int64] = (0..<14).map { 1_767_225_600 + Int64($0) * (13 * 3600 + 7 * 60) }

    static let names: [DomainName] =
        [
            "example.com", "www.youtube.com", "www.google.com", "api.phosra-api.fly.dev", "a.b.c.d.e.f.example",
            "1.2.3.4", "school.example", "dns.google",
        ].map(parse) + Category.allCases.map { parse("www.\($0.id).example") }

    static func parse(_ text: String) -> DomainName {
        guard let name = try? QueryName.parse(text) else { preconditionFailure("fixed name \(text) does not parse") }
        return name
    }
}
