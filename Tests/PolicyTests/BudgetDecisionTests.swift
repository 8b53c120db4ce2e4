import DomainMatch
import Testing
import Zoneinfo

@testable import Policy

/// Daily app budgets in the decision order (docs/decisions.md#the-decision-order, step
/// 2b): a spent budget blocks its service with `limit:<id>` until local midnight, after
/// the cutoffs and before the parent's lists; `always_allow` and `downtime_allow` are not
/// affected.
@Suite struct BudgetDecisionTests {
    static func engine(
        _ policy: CompiledPolicy, options: DecisionOptions = DecisionOptions()
    ) throws -> (DecisionEngine<SetMatcher>, PolicyRules) {
        let services = try ServiceCatalogue.decode(Array(ServiceDecisionTests.catalogue.utf8))
        let rules = PolicyRules(policy)
        let engine = DecisionEngine(
            system: SystemRules(options), categories: CategorySet(lists: [:]), zone: .utc,
            profiles: ProfileTable(single: rules), services: services)
        return (engine, rules)
    }

    static func policy(
        limits: [(String, Int)], allowed: [String] = [], blockedApps: [String] = [],
        alwaysAllowed: [String] = [], windows: [CompiledPolicy.DowntimeWindow] = []
    ) -> CompiledPolicy {
        var policy = ServiceDecisionTests.policy(
            blockedApps: blockedApps, allowed: allowed, alwaysAllowed: alwaysAllowed, windows: windows)
        policy.screenTime.perAppLimits = limits.map { CompiledPolicy.AppLimit(bundleID: $0.0, dailyMinutes: $0.1) }
        return policy
    }

    static let today = Fixture.mondayNoon.daysSince1970

    static func spent(_ minutes: [String: Int], day: Int = today) -> ServiceUsage {
        ServiceUsage(day: day, minutes: minutes)
    }

    static func decide(
        _ engine: DecisionEngine<SetMatcher>, _ name: String, _ rules: PolicyRules, _ usage: ServiceUsage,
        at local: LocalDateTime = Fixture.mondayNoon
    ) -> String {
        engine.decide(try! QueryName.parse(name), rules: rules, local: local, usage: usage).description
    }

    @Test func aSpentBudgetBlocksEveryDomainOfItsServiceUntilMidnight() throws {
        let (engine, rules) = try Self.engine(Self.policy(limits: [("com.zhiliaoapp.musically", 60)]))
        for name in ["tiktok.com", "www.tiktok.com", "v16.tiktokcdn.com"] {
            #expect(Self.decide(engine, name, rules, Self.spent(["tiktok": 59])) == "allow default", "\(name)")
            #expect(Self.decide(engine, name, rules, Self.spent(["tiktok": 60])) == "block limit:tiktok", "\(name)")
        }
        // Another app's minutes, or another day's, do not count.
        #expect(Self.decide(engine, "tiktok.com", rules, Self.spent(["youtube": 600])) == "allow default")
        #expect(
            Self.decide(engine, "tiktok.com", rules, Self.spent(["tiktok": 60], day: Self.today - 1))
                == "allow default")
        // The next local day refills it.
        #expect(
            Self.decide(
                engine, "tiktok.com", rules, Self.spent(["tiktok": 60]), at: Fixture.at(.tuesday, 0, 0))
                == "allow default")
        // Names of other services and of none are not touched.
        #expect(Self.decide(engine, "youtube.com", rules, Self.spent(["tiktok": 60])) == "allow default")
        #expect(Self.decide(engine, "example.org", rules, Self.spent(["tiktok": 60])) == "allow default")
    }

    @Test func eitherPlatformsBundleIDSetsTheBudgetAndTheSmallestWins() throws {
        let android = try Self.engine(Self.policy(limits: [("com.ss.android.ugc.trill", 30)]))
        #expect(Self.decide(android.0, "tiktok.com", android.1, Self.spent(["tiktok": 30])) == "block limit:tiktok")
        let both = try Self.engine(
            Self.policy(limits: [("com.zhiliaoapp.musically", 90), ("com.ss.android.ugc.trill", 45)]))
        #expect(both.1.dailyMinutes(for: both.0.services.services[0]) == 45)
        // Zero minutes: nothing today. A negative value is no budget.
        let zero = try Self.engine(Self.policy(limits: [("com.zhiliaoapp.musically", 0)]))
        #expect(Self.decide(zero.0, "tiktok.com", zero.1, Self.spent([:])) == "block limit:tiktok")
        let negative = try Self.engine(Self.policy(limits: [("com.zhiliaoapp.musically", -5)]))
        #expect(Self.decide(negative.0, "tiktok.com", negative.1, Self.spent(["tiktok": 900])) == "allow default")
    }

    @Test func aParentAllowDoesNotLiftASpentBudgetButLiftsABlockedApp() throws {
        // The budget is step 2b, before the parent's lists: allowing youtube.com does not
        // give more minutes.
        let (engine, rules) = try Self.engine(
            Self.policy(limits: [("com.google.ios.youtube", 60)], allowed: ["youtube.com"]))
        #expect(Self.decide(engine, "www.youtube.com", rules, Self.spent(["youtube": 10])) == "allow allowed_domain")
        #expect(Self.decide(engine, "www.youtube.com", rules, Self.spent(["youtube": 60])) == "block limit:youtube")
        // Blocked and limited: the spent budget speaks first; the block otherwise.
        let both = try Self.engine(
            Self.policy(limits: [("com.zhiliaoapp.musically", 5)], blockedApps: ["com.zhiliaoapp.musically"]))
        #expect(Self.decide(both.0, "tiktok.com", both.1, Self.spent(["tiktok": 5])) == "block limit:tiktok")
        #expect(Self.decide(both.0, "tiktok.com", both.1, Self.spent([:])) == "block service:tiktok")
    }

    @Test func aSpentBudgetAgainstAlwaysAllowAndDowntimeAllow() throws {
        var options = DecisionOptions()
        options.alwaysAllow = ["www.tiktok.com"]
        options.downtimeAllow = ["tiktokcdn.com"]
        let (engine, rules) = try Self.engine(Self.policy(limits: [("com.zhiliaoapp.musically", 60)]), options: options)
        let spent = Self.spent(["tiktok": 60])
        #expect(Self.decide(engine, "www.tiktok.com", rules, spent) == "allow system")
        #expect(Self.decide(engine, "v16.tiktokcdn.com", rules, spent) == "allow default")
        #expect(Self.decide(engine, "api.tiktokv.com", rules, spent) == "block limit:tiktok")
    }

    @Test func inDowntimeTheCutoffComesFirstAndAnAlwaysAllowedAppStillSpendsItsBudget() throws {
        let window = CompiledPolicy.DowntimeWindow(startTime: "11:00", endTime: "13:00")
        let (engine, rules) = try Self.engine(
            Self.policy(
                limits: [("com.zhiliaoapp.musically", 60), ("com.apple.Maps", 30)], alwaysAllowed: ["com.apple.Maps"],
                windows: [window]))
        let spent = Self.spent(["tiktok": 60, "apple-maps": 30])
        #expect(Self.decide(engine, "tiktok.com", rules, spent) == "block downtime")
        #expect(Self.decide(engine, "tiktok.com", rules, Self.spent([:])) == "block downtime")
        // Maps passes downtime, but its own budget still ends it.
        #expect(Self.decide(engine, "maps.apple.com", rules, Self.spent([:])) == "allow default")
        #expect(Self.decide(engine, "maps.apple.com", rules, spent) == "block limit:apple-maps")
        // Names inside an answer (a CNAME chain) are judged by the lists, not the clock.
        let chained = engine.decide(
            try QueryName.parse("tiktok.com"), rules: rules, local: Fixture.mondayNoon, applyCutoff: false,
            usage: spent)
        #expect(chained.description == "allow default")
    }

    @Test func withoutUsageNothingIsSpent() throws {
        let (engine, rules) = try Self.engine(Self.policy(limits: [("com.zhiliaoapp.musically", 0)]))
        #expect(engine.decide("tiktok.com", rules: rules).description == "allow default")
    }
}
