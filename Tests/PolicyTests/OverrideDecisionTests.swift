import DomainMatch
import Testing
import Zoneinfo

@testable import Policy

/// The parent's overrides in the decision order (docs/parent-page.md#overrides): a pause
/// after the system names, an extension lifting the cutoff, an app bonus added to a
/// budget, an exception lifting the lists but never a pause, a cutoff or circumvention.
@Suite struct OverrideDecisionTests {
    /// Monday 2026-11-30 12:00 UTC, as `Fixture.mondayNoon`.
    static let noon = Int64(Fixture.mondayNoon.daysSince1970) * 86_400 + 12 * 3_600

    static func engine(
        _ policy: CompiledPolicy, options: DecisionOptions = DecisionOptions()
    ) throws -> (DecisionEngine<SetMatcher>, PolicyRules) {
        let services = try ServiceCatalogue.decode(Array(ServiceDecisionTests.catalogue.utf8))
        let rules = PolicyRules(policy)
        let engine = DecisionEngine(
            system: SystemRules(options), categories: CategorySet(lists: Fixture.lists.mapValues(Fixture.names)),
            zone: .utc, profiles: ProfileTable(single: rules), services: services)
        return (engine, rules)
    }

    static func override(
        _ kind: Override.Kind, id: Int64 = 1, from start: Int64 = noon - 60, minutes: Int64? = 60
    ) -> Override {
        Override(
            id: id, profile: "kid", kind: kind, start: start, end: minutes.map { start + $0 * 60 },
            setBy: "page 192.168.1.20")
    }

    static func decide(
        _ engine: DecisionEngine<SetMatcher>, _ name: String, _ rules: PolicyRules, _ overrides: [Override],
        at instant: Int64 = noon, usage: ServiceUsage = ServiceUsage()
    ) -> String {
        let profile = Profile(name: "kid", rules: rules, usage: usage, overrides: Overrides(overrides))
        let local = ZoneRules.utc.localDateTime(at: instant)
        return engine.decide(try! QueryName.parse(name), profile: profile, at: instant, local: local).description
    }

    static func exception(_ name: String, id: Int64 = 1, minutes: Int64? = 60) -> Override {
        override(.exception(try! QueryName.parse(name)), id: id, minutes: minutes)
    }

    @Test func aPauseBlocksEverythingButSystemNamesAndAlwaysAllowedApps() throws {
        var options = DecisionOptions()
        options.alwaysAllow = ["school.example"]
        options.downtimeAllow = ["homework.example"]
        var policy = ServiceDecisionTests.policy(allowed: ["wikipedia.org"], alwaysAllowed: ["net.whatsapp.WhatsApp"])
        policy.webFilter.safeSearch = true
        let (engine, rules) = try Self.engine(policy, options: options)
        let pause = [Self.override(.pause)]
        for name in ["example.org", "wikipedia.org", "homework.example", "www.google.com", "tiktok.com"] {
            #expect(Self.decide(engine, name, rules, pause) == "block paused", "\(name)")
        }
        #expect(Self.decide(engine, "www.school.example", rules, pause) == "allow system")
        #expect(Self.decide(engine, "phosra-api.fly.dev", rules, pause) == "allow system")
        #expect(Self.decide(engine, "web.whatsapp.com", rules, pause) == "allow default", "always_allowed_apps")
        // It ends on its own, and a pause "until resumed" has no end.
        #expect(Self.decide(engine, "example.org", rules, pause, at: Self.noon + 3_600) == "allow default")
        let open = [Self.override(.pause, minutes: nil)]
        #expect(Self.decide(engine, "example.org", rules, open, at: Self.noon + 86_400 * 30) == "block paused")
        // One that has not started yet decides nothing.
        let later = [Self.override(.pause, from: Self.noon + 600)]
        #expect(Self.decide(engine, "example.org", rules, later) == "allow default")
    }

    @Test func anExtensionLiftsDowntimeAndScheduleButNotAPauseOrABudget() throws {
        let window = CompiledPolicy.DowntimeWindow(startTime: "11:00", endTime: "13:00")
        var policy = BudgetDecisionTests.policy(limits: [("com.zhiliaoapp.musically", 30)], windows: [window])
        policy.webFilter.blockedDomains = ["reddit.com"]
        let (engine, rules) = try Self.engine(policy)
        #expect(Self.decide(engine, "example.org", rules, []) == "block downtime")
        let extended = [Self.override(.extension, minutes: 30)]
        #expect(Self.decide(engine, "example.org", rules, extended) == "allow default")
        #expect(Self.decide(engine, "reddit.com", rules, extended) == "block blocked_domain:reddit.com")
        let spent = BudgetDecisionTests.spent(["tiktok": 30])
        #expect(Self.decide(engine, "tiktok.com", rules, extended, usage: spent) == "block limit:tiktok")
        // After its 30 minutes the downtime is back.
        #expect(Self.decide(engine, "example.org", rules, extended, at: Self.noon + 30 * 60) == "block downtime")
        // A pause beside an extension still blocks.
        let both = extended + [Self.override(.pause, id: 2)]
        #expect(Self.decide(engine, "example.org", rules, both) == "block paused")
        // The schedule too: outside the allowed hours.
        var scheduled = Fixture.policy()
        scheduled.screenTime.schedule = CompiledPolicy.Schedule(
            weekday: .init(start: "15:00", end: "18:00"), weekend: .init(start: "", end: ""))
        let (engine2, rules2) = try Self.engine(scheduled)
        #expect(Self.decide(engine2, "example.org", rules2, []) == "block schedule")
        #expect(Self.decide(engine2, "example.org", rules2, extended) == "allow default")
    }

    @Test func anAppBonusAddsMinutesOnItsDayOnly() throws {
        let (engine, rules) = try Self.engine(BudgetDecisionTests.policy(limits: [("com.zhiliaoapp.musically", 30)]))
        let spent = BudgetDecisionTests.spent(["tiktok": 40])
        #expect(Self.decide(engine, "tiktok.com", rules, [], usage: spent) == "block limit:tiktok")
        let today = BudgetDecisionTests.today
        let bonus = [
            Self.override(.appBonus(service: "tiktok", minutes: 15, day: today), minutes: 12 * 60)
        ]
        #expect(Self.decide(engine, "tiktok.com", rules, bonus, usage: spent) == "allow default")
        let more = BudgetDecisionTests.spent(["tiktok": 45])
        #expect(Self.decide(engine, "tiktok.com", rules, bonus, usage: more) == "block limit:tiktok")
        // Another app's bonus or another day's does not count.
        let other = [
            Self.override(.appBonus(service: "youtube", minutes: 60, day: today), id: 2, minutes: 12 * 60),
            Self.override(.appBonus(service: "tiktok", minutes: 60, day: today - 1), id: 3, minutes: 12 * 60),
        ]
        #expect(Self.decide(engine, "tiktok.com", rules, other, usage: spent) == "block limit:tiktok")
        // Two bonuses add up.
        let two = bonus + [Self.override(.appBonus(service: "tiktok", minutes: 15, day: today), id: 4)]
        #expect(Self.decide(engine, "tiktok.com", rules, two, usage: more) == "allow default")
    }

    @Test func anExceptionLiftsListsAppsCategoriesAndBudgetsForItsNameAndBelow() throws {
        var policy = BudgetDecisionTests.policy(
            limits: [("com.google.ios.youtube", 10)], blockedApps: ["com.zhiliaoapp.musically"])
        policy.webFilter.blockedDomains = ["reddit.com"]
        policy.webFilter.blockedCategories = ["social", "gambling"]
        policy.webFilter.safeSearch = true
        let (engine, rules) = try Self.engine(policy)
        let spent = BudgetDecisionTests.spent(["youtube": 10])
        let cases: [(String, String, String)] = [
            ("reddit.com", "www.reddit.com", "blocked_domain:reddit.com"),
            ("tiktok.com", "v16.tiktok.com", "service:tiktok"),
            ("bet365.com", "bet365.com", "category:gambling"),
            ("youtube.com", "m.youtube.com", "limit:youtube"),
        ]
        for (entry, name, before) in cases {
            #expect(Self.decide(engine, name, rules, [], usage: spent) == "block \(before)", "\(name)")
            let allowed = Self.decide(engine, name, rules, [Self.exception(entry)], usage: spent)
            #expect(allowed == "allow exception" || allowed.hasPrefix("rewrite safe_search"), "\(name): \(allowed)")
        }
        // Its rule is the exception's name; a sibling or a parent is not covered.
        let profile = Profile(name: "kid", rules: rules, overrides: Overrides([Self.exception("reddit.com")]))
        let decision = engine.decide(
            try QueryName.parse("old.reddit.com"), profile: profile, at: Self.noon, local: Fixture.mondayNoon)
        #expect(decision.reason == .exception && decision.rule == "reddit.com")
        #expect(Self.decide(engine, "notreddit.com", rules, [Self.exception("reddit.com")]) == "allow default")
        #expect(
            Self.decide(engine, "reddit.com", rules, [Self.exception("old.reddit.com")])
                == "block blocked_domain:reddit.com")
        // Safe search still rewrites a name under an exception.
        #expect(
            Self.decide(engine, "www.youtube.com", rules, [Self.exception("youtube.com")])
                .hasPrefix("rewrite safe_search"))
        // Once it ends, the block is back.
        #expect(
            Self.decide(engine, "reddit.com", rules, [Self.exception("reddit.com")], at: Self.noon + 3_600)
                == "block blocked_domain:reddit.com")
    }

    @Test func anExceptionNeverLiftsAPauseACutoffOrCircumvention() throws {
        let window = CompiledPolicy.DowntimeWindow(startTime: "11:00", endTime: "13:00")
        let (engine, rules) = try Self.engine(Fixture.policy(level: "strict", categories: ["proxy"], windows: [window]))
        #expect(Self.decide(engine, "example.org", rules, [Self.exception("example.org")]) == "block downtime")
        let (open, openRules) = try Self.engine(Fixture.policy(categories: ["proxy"]))
        let paused = [Self.exception("example.org"), Self.override(.pause, id: 2)]
        #expect(Self.decide(open, "example.org", openRules, paused) == "block paused")
        #expect(
            Self.decide(open, "dns.google", openRules, [Self.exception("dns.google")])
                == "block circumvention:dns.google")
        #expect(
            Self.decide(open, "nordvpn.com", openRules, [Self.exception("nordvpn.com")])
                == "block circumvention:nordvpn.com")
    }

    @Test func chainNamesAreJudgedWithTheExceptionButWithoutThePause() throws {
        let (engine, rules) = try Self.engine(Fixture.policy(blocked: ["cdn.example"]))
        let profile = Profile(
            name: "kid", rules: rules,
            overrides: Overrides([Self.exception("cdn.example"), Self.override(.pause, id: 2)]))
        let link = try QueryName.parse("edge.cdn.example")
        let decision = engine.decide(
            link, profile: profile, at: Self.noon, local: Fixture.mondayNoon, applyCutoff: false)
        #expect(decision.description == "allow exception")
        #expect(!rules.inspectsAnswer(after: decision), "an excepted name's answer is not inspected")
    }

    @Test func theNextChangeIsTheNearestStartOrEnd() {
        let set = Overrides([
            Self.override(.pause, id: 1, from: Self.noon - 60, minutes: 30),
            Self.override(.extension, id: 2, from: Self.noon + 120, minutes: 10),
            Self.override(.pause, id: 3, from: Self.noon - 600, minutes: nil),
        ])
        #expect(set.nextChange(after: Self.noon) == Self.noon + 120)
        #expect(set.nextChange(after: Self.noon + 120) == Self.noon + 720)
        #expect(set.nextChange(after: Self.noon + 30 * 60) == nil)
        #expect(Overrides.none.nextChange(after: Self.noon) == nil)
        // The pause ending last is the one in force.
        #expect(set.pause(at: Self.noon)?.id == 3)
        #expect(set.pruned(at: Self.noon + 3_600).all.map(\.id) == [3])
    }

    @Test func aDeviceAssignmentComesBeforeTheConfigurationsMACAndAddressEntries() throws {
        let mac = try #require(MACAddress("aa:bb:cc:dd:ee:01"))
        let roster = ProfileRoster(
            members: [
                .init(name: "alice", clients: [.mac(mac), ClientEntry("192.168.1.0/24")!], proxyUser: "alice"),
                .init(name: "bob"),
            ], defaultProfile: "alice")
        let profiles = [Profile(name: "alice", rules: .unfiltered), Profile(name: "bob", rules: .unfiltered)]
        let plain = ProfileTable(roster: roster, profiles: profiles)
        let client = Client(address: IPAddress("192.168.1.5"), mac: mac)
        #expect(plain.choose(client).name == "alice")
        let assigned = ProfileTable(
            roster: roster, profiles: profiles, assignments: [mac: "bob", MACAddress("aa:bb:cc:dd:ee:02")!: "carol"])
        #expect(assigned.choose(client).name == "bob")
        #expect(assigned.why(client) == "MAC aa:bb:cc:dd:ee:01, assigned on the page")
        // A proxy user still comes first; an assignment to an unknown profile is left out.
        #expect(
            assigned.choose(Client(address: IPAddress("192.168.1.5"), mac: mac, proxyUser: "alice")).name == "alice")
        let other = Client(address: IPAddress("192.168.1.6"), mac: MACAddress("aa:bb:cc:dd:ee:02"))
        #expect(assigned.choose(other).name == "alice")
    }

    @Test func theNeighbourTableIsReadWhenAMACDecidesOrThePageLearnsDevices() {
        let roster = ProfileRoster(
            members: [.init(name: "alice", clients: [ClientEntry("192.168.1.0/24")!])], defaultProfile: "alice")
        let profiles = [Profile(name: "alice", rules: .unfiltered)]
        #expect(!ProfileTable(roster: roster, profiles: profiles).usesMACs, "addresses alone: no lookup")
        #expect(ProfileTable(roster: roster, profiles: profiles, learnsMACs: true).usesMACs)
        #expect(
            ProfileTable(roster: roster, profiles: profiles, assignments: [MACAddress("aa:bb:cc:dd:ee:01")!: "alice"])
                .usesMACs)
    }
}
