import DomainMatch
import Testing
import Zoneinfo

@testable import Policy

/// The daily limit (docs/services.md#the-daily-limit): minutes online counted from the
/// names a profile's devices use, background names and always-allowed apps spending none,
/// and at the limit every name blocked with `daily_limit` (step 2c) but the system names,
/// the background names and the always-allowed apps, until local midnight.
@Suite struct DailyLimitDecisionTests {
    static let noon = OverrideDecisionTests.noon

    static func engine(
        limit: Int, options: DecisionOptions = DecisionOptions(), alwaysAllowed: [String] = ["net.whatsapp.WhatsApp"],
        appLimits: [(String, Int)] = [], windows: [CompiledPolicy.DowntimeWindow] = []
    ) throws -> (DecisionEngine<SetMatcher>, PolicyRules) {
        var policy = BudgetDecisionTests.policy(
            limits: appLimits, allowed: ["wikipedia.org"], alwaysAllowed: alwaysAllowed, windows: windows)
        policy.screenTime.dailyLimitMinutes = limit
        return try OverrideDecisionTests.engine(policy, options: options)
    }

    static func decide(
        _ engine: DecisionEngine<SetMatcher>, _ name: String, _ rules: PolicyRules, online minutes: Int,
        overrides: [Override] = [], at instant: Int64 = noon, extra: [String: Int] = [:]
    ) -> String {
        let day = ZoneRules.utc.localDateTime(at: noon).daysSince1970
        var spent = extra
        spent[ServiceUsage.online] = minutes
        return OverrideDecisionTests.decide(
            engine, name, rules, overrides, at: instant, usage: ServiceUsage(day: day, minutes: spent))
    }

    /// The profile's minutes online after its devices used `names`, one a second from `start`.
    static func online(
        _ engine: DecisionEngine<SetMatcher>, _ rules: PolicyRules, _ names: [String], from start: Int64 = noon,
        step: Int64 = 1, profile: Profile? = nil
    ) -> Int {
        let used = profile ?? Profile(name: "kid", rules: rules)
        for (index, name) in names.enumerated() {
            let instant = start + Int64(index) * step
            engine.recordUse(
                of: try! QueryName.parse(name), by: used, at: instant, local: ZoneRules.utc.localDateTime(at: instant))
        }
        return used.usage.minutes(ServiceUsage.online, day: ZoneRules.utc.localDateTime(at: start).daysSince1970)
    }

    @Test func backgroundNamesSpendNothingAndBrowsingSpendsOneMinuteEachMinute() throws {
        var options = DecisionOptions()
        options.backgroundDomains = ["telemetry.vendor.example"]
        let (engine, rules) = try Self.engine(limit: 120, options: options)
        let background = [
            "1-courier.push.apple.com", "time.apple.com", "captive.apple.com", "mesu.apple.com",
            "mtalk.google.com", "connectivitycheck.gstatic.com", "time.android.com", "www.msftconnecttest.com",
            "client.wns.windows.com", "ctest.cdn.nintendo.net", "2.pool.ntp.org", "eu.telemetry.vendor.example",
            "phosra-api.fly.dev",
        ]
        // Thirty minutes of background only, a name every 20 s: nothing.
        let idle = (0..<90).map { background[$0 % background.count] }
        #expect(Self.online(engine, rules, idle, step: 20) == 0)
        // An always-allowed app's names are not online time either.
        #expect(Self.online(engine, rules, ["web.whatsapp.com", "mmg.whatsapp.net"], step: 60) == 0)
        // Browsing: one minute per minute, however many names in it.
        let browsing = (0..<600).map { "host\($0 % 7).example.org" }
        #expect(Self.online(engine, rules, browsing, step: 3) == 30)
        // A name under a background entry's parent is not background (apple.com is used).
        #expect(Self.online(engine, rules, ["www.apple.com"]) == 1)
    }

    @Test func twoDevicesInTheSameMinuteSpendOneAndUnfilteredProfilesNone() throws {
        let (engine, rules) = try Self.engine(limit: 120)
        let kid = Profile(name: "kid", rules: rules)
        // Two devices of one profile share its usage: the same minute counts once.
        _ = Self.online(engine, rules, ["a.example.org"], profile: kid)
        #expect(Self.online(engine, rules, ["b.example.org"], from: Self.noon + 30, profile: kid) == 1)
        #expect(Self.online(engine, rules, ["b.example.org"], from: Self.noon + 60, profile: kid) == 2)
        let none = Profile(name: "none", rules: .unfiltered)
        #expect(Self.online(engine, rules, ["a.example.org"], profile: none) == 0)
    }

    @Test func atTheLimitEverythingButSystemBackgroundAndAlwaysAllowedAppsBlocks() throws {
        var options = DecisionOptions()
        options.alwaysAllow = ["school.example"]
        options.downtimeAllow = ["homework.example"]
        options.backgroundDomains = ["telemetry.vendor.example"]
        let (engine, rules) = try Self.engine(limit: 120, options: options)
        for name in ["example.org", "wikipedia.org", "homework.example", "tiktok.com"] {
            #expect(Self.decide(engine, name, rules, online: 119) != "block daily_limit", "\(name)")
            #expect(Self.decide(engine, name, rules, online: 120) == "block daily_limit", "\(name)")
        }
        for name in ["www.school.example", "phosra-api.fly.dev"] {
            #expect(Self.decide(engine, name, rules, online: 120) == "allow system", "\(name)")
        }
        for name in ["1-courier.push.apple.com", "mtalk.google.com", "time.android.com", "x.telemetry.vendor.example"] {
            #expect(Self.decide(engine, name, rules, online: 500) == "allow default", "\(name)")
        }
        #expect(Self.decide(engine, "web.whatsapp.com", rules, online: 500) == "allow default", "always_allowed_apps")
        // The next local day starts from nothing: yesterday's minutes are another day's.
        #expect(Self.decide(engine, "example.org", rules, online: 120, at: Self.noon + 12 * 3600) == "allow default")
        // No limit (0): never blocked however long.
        let (free, freeRules) = try Self.engine(limit: 0)
        #expect(Self.decide(free, "example.org", freeRules, online: 1440) == "allow default")
    }

    @Test func theOrderIsPauseCutoffBudgetThenTheLimitAndAnExceptionDoesNotLiftIt() throws {
        let window = CompiledPolicy.DowntimeWindow(startTime: "20:00", endTime: "07:00")
        let (engine, rules) = try Self.engine(
            limit: 60, appLimits: [("com.zhiliaoapp.musically", 30)], windows: [window])
        #expect(
            Self.decide(engine, "example.org", rules, online: 60, overrides: [OverrideDecisionTests.override(.pause)])
                == "block paused")
        #expect(
            Self.decide(engine, "example.org", rules, online: 60, at: Self.noon + 9 * 3600) == "block downtime")
        #expect(
            Self.decide(engine, "tiktok.com", rules, online: 60, extra: ["tiktok": 30]) == "block limit:tiktok")
        #expect(Self.decide(engine, "tiktok.com", rules, online: 60) == "block daily_limit")
        let exception = [OverrideDecisionTests.exception("example.org")]
        #expect(Self.decide(engine, "example.org", rules, online: 60, overrides: exception) == "block daily_limit")
    }

    @Test func theParentsBonusMinutesOfTheDayAddToTheLimit() throws {
        let (engine, rules) = try Self.engine(limit: 120)
        let day = ZoneRules.utc.localDateTime(at: Self.noon).daysSince1970
        let bonus = [OverrideDecisionTests.override(.dailyBonus(minutes: 30, day: day), minutes: 12 * 60)]
        #expect(Self.decide(engine, "example.org", rules, online: 120, overrides: bonus) == "allow default")
        #expect(Self.decide(engine, "example.org", rules, online: 149, overrides: bonus) == "allow default")
        #expect(Self.decide(engine, "example.org", rules, online: 150, overrides: bonus) == "block daily_limit")
        // Another day's bonus, or one removed, adds nothing.
        let yesterday = [OverrideDecisionTests.override(.dailyBonus(minutes: 30, day: day - 1), minutes: 12 * 60)]
        #expect(Self.decide(engine, "example.org", rules, online: 120, overrides: yesterday) == "block daily_limit")
        let ended = [OverrideDecisionTests.override(.dailyBonus(minutes: 30, day: day), minutes: 0)]
        #expect(Self.decide(engine, "example.org", rules, online: 120, overrides: ended) == "block daily_limit")
    }

    @Test func restrictedDataSharingBlocksTheAdsCategory() throws {
        var policy = Fixture.policy()
        policy.webFilter.level = "light"
        #expect(!PolicyRules(policy).categories.contains(.ads))
        policy.privacy.dataSharingRestricted = true
        let rules = PolicyRules(policy)
        #expect(rules.categories.contains(.ads) && rules.restrictsDataSharing)
        let engine = DecisionEngine(
            system: SystemRules(DecisionOptions()),
            categories: CategorySet(lists: Fixture.lists.mapValues(Fixture.names)),
            zone: .utc, profiles: ProfileTable(single: rules))
        let listed = try #require(Fixture.lists[.ads]?.first)
        #expect(
            engine.decide(try QueryName.parse(listed), rules: rules, local: Fixture.mondayNoon).description
                == "block category:ads")
    }

    @Test func theMinutesOnlineOfTheLatestDayAreReadWithoutTheTableAndOtherDaysFromIt() {
        let usage = ServiceUsage()
        let day = 20_000
        let noon = Int64(day) * 86_400 + 12 * 3_600
        #expect(usage.onlineMinutes(day: day) == 0)
        for minute in 0..<5 { usage.record(ServiceUsage.online, at: noon + Int64(minute) * 60, day: day) }
        usage.record(ServiceUsage.online, at: noon + 30, day: day)
        #expect(usage.onlineMinutes(day: day) == 5)
        #expect(usage.isCounted(ServiceUsage.online, at: noon + 4 * 60 + 59, day: day))
        #expect(!usage.isCounted(ServiceUsage.online, at: noon + 5 * 60, day: day))
        // An older day read back from the store leaves today's count; asked for, it is there.
        var older = MinuteSet()
        for slot in 0..<7 { older.insert(slot: slot) }
        usage.restore(ServiceUsage.Key(day: day - 1, service: ServiceUsage.online), older)
        #expect(usage.onlineMinutes(day: day) == 5)
        #expect(usage.onlineMinutes(day: day - 1) == 7)
        // A later day has none until one is counted; then it is the latest.
        #expect(usage.onlineMinutes(day: day + 1) == 0)
        usage.record(ServiceUsage.online, at: noon + 86_400, day: day + 1)
        #expect(usage.onlineMinutes(day: day + 1) == 1)
        #expect(usage.onlineMinutes(day: day) == 5)
        // The "what if" of `check --budget-used daily=…`.
        #expect(ServiceUsage(day: day, minutes: [ServiceUsage.online: 119]).onlineMinutes(day: day) == 119)
    }
}
