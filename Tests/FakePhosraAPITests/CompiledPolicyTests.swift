import EventLoop
import Foundation
import HTTPClient
import SystemIO
import TestSupport
import Testing

/// docs/sync.md#compiledpolicy-documents: the CompiledPolicy exactly as the server emits it: Go key order, omitempty keys
/// absent, web arrays always present, a fresh `generated_at` with 0–9 fractional digits,
/// `status` active, versions that jump.
@Suite(.blocking) struct CompiledPolicyTests {
    static let fixtures = [
        "policy-age07-quicksetup-recommended.json", "policy-age10-quicksetup-plus-parent-web-rules.json",
        "policy-age15-quicksetup-relaxed.json", "policy-edge-emergency-lockdown-age12.json",
    ]

    @Test(arguments: fixtures)
    func fact8_theExamplePoliciesAreServedExactlyAsTheyAreWritten(name: String) throws {
        let text = try fixture(name)
        let expected = try TestJSON.parse(text)
        let harness = try Harness()
        let childID = harness.fake.addChild(
            age: try #require(expected["child_age"]?.int),
            id: try #require(expected["child_id"]?.string))
        let policy = try FakePolicy(compiledPolicyJSON: text)
        harness.fake.addPolicy(policy, to: childID)
        let key = harness.fake.registerDevice(childID: childID).apiKey
        let served = try #require(try harness.policy(key: .some(key)).json)
        // Everything but the time matches, key order included.
        #expect(served.replacing("generated_at", with: "T") == expected.replacing("generated_at", with: "T"))
        #expect(served.description.hasPrefix("{\"version\":\(policy.version),\"child_id\":\"\(childID)\""))
    }

    @Test func fact8_omitemptyKeysAreAbsentAndWebListsAreAlwaysArrays() throws {
        let harness = try Harness()
        let bare = FakePolicy(version: 1)
        let childID = harness.fake.addChild(age: 5)
        harness.fake.addPolicy(bare, to: childID)
        let key = harness.fake.registerDevice(childID: childID).apiKey
        let json = try #require(try harness.policy(key: .some(key)).json)
        #expect(
            json.keys == [
                "version", "child_id", "child_age", "age_group", "policy_id", "status", "generated_at",
                "content_filter", "screen_time", "purchases", "privacy", "social", "notifications", "web_filter",
            ])
        #expect(json["screen_time"]?.keys == ["daily_limit_minutes", "always_allowed_apps"])
        #expect(json["purchases"]?.keys == ["require_approval", "block_iap"])
        #expect(json["notifications"] == .emptyObject)
        #expect(
            json["web_filter"]?.description
                == #"{"level":"","safe_search":false,"blocked_domains":[],"allowed_domains":[],"blocked_categories":[]}"#
        )
        #expect(json["content_filter"]?["blocked_apps"] == [] && json["content_filter"]?["allowed_apps"] == [])
        #expect(json["age_group"] == "Young Child" && json["status"] == "active")
        // Filled in, the optional keys appear in struct order.
        harness.fake.updatePolicy(bare.policyID) {
            $0.screenTime.perAppLimits = [.init(bundleID: "com.example", dailyMinutes: 30)]
            $0.screenTime.downtimeWindows = [.init(daysOfWeek: ["mon"], startTime: "21:30", endTime: "06:30")]
            $0.screenTime.schedule = .init(
                weekday: .init(start: "7:00", end: "20:00"), weekend: .init(start: "", end: ""))
            $0.purchases.spendingCapUSD = 12.5
            $0.notifications.usageTimerMinutes = 15
            $0.webFilter.blockedDomains = ["Discord.gg", "a&b<c>.test"]
        }
        let filled = try harness.policy(key: .some(key))
        let full = try #require(filled.json)
        #expect(
            full["screen_time"]?.keys == [
                "daily_limit_minutes", "per_app_limits", "downtime_windows", "always_allowed_apps",
                "schedule",
            ])
        #expect(full["screen_time"]?["schedule"]?["weekend"]?.description == #"{"start":"","end":""}"#)
        #expect(full["purchases"]?["spending_cap_usd"] == .number("12.5"))
        #expect(full["notifications"]?.keys == ["usage_timer_minutes"])
        #expect(filled.bodyText.contains(#""a\u0026b\u003cc\u003e.test""#))  // Go escapes HTML characters
        #expect(full["version"] == 2)
    }

    @Test func fact8_generatedAtIsNewOnEveryResponseWithAVaryingNumberOfDigits() throws {
        // 1.234567891 s past a whole second, moved 1.5 ms between responses: every digit
        // count has digits to show.
        let clock = ManualClock(wall: WallTime(unixSeconds: 1_774_966_029, nanoseconds: 234_567_891))
        let harness = try Harness(clock: clock)
        var stamps: [String] = []
        for _ in 0..<12 {
            stamps.append(try #require(try harness.policy().json?["generated_at"]?.string))
            clock.advance(by: 1_500_000)
        }
        #expect(Set(stamps).count == stamps.count)
        var digitCounts = Set<Int>()
        for stamp in stamps {
            #expect(FakeTime.isRFC3339(stamp) && stamp.hasSuffix("Z"))
            let fraction = stamp.split(separator: ".").dropFirst().first.map { $0.dropLast().count } ?? 0
            #expect(fraction <= 9)
            digitCounts.insert(fraction)
        }
        #expect(digitCounts.count >= 5)
        #expect(digitCounts.contains(0))
    }

    @Test func fact8_versionsJumpByTheNumberOfRulesChanged() throws {
        let harness = try Harness()
        harness.fake.updatePolicy(harness.policyID, versionBump: 4) {
            $0.webFilter.blockedCategories = ["adult", "gambling", "social_media", "dating"]
            $0.webFilter.blockedDomains = [
                "reddit.com", "*.4chan.org", "https://www.TikTok.com/foryou", "Discord.gg", "reddit.com",
            ]
            $0.webFilter.allowedDomains = ["khanacademy.org"]
        }
        let json = try #require(try harness.policy(since: "42").json)
        #expect(json["version"] == 46)
        #expect(json["web_filter"]?["blocked_domains"]?.array?.count == 5)  // duplicates and all, verbatim
        #expect(try harness.policy(since: "46").status == 304)
    }

    @Test func quickSetupWritesHoursLikeTheAgeGenerator() throws {
        let teen = FakePolicy.quickSetup(age: 17)
        #expect(
            teen.screenTime.schedule
                == .init(weekday: .init(start: "7:00", end: "23:00"), weekend: .init(start: "8:00", end: "24:00")))
        #expect(teen.webFilter.level == "light" && teen.version == 38)
        #expect(FakePolicy.quickSetup(age: 8).webFilter.level == "strict")
        #expect(FakePolicy.quickSetup(age: 11).screenTime.dailyLimitMinutes == 120)
    }
}

extension TestJSON {
    /// The same object with the member `key` set to `value`.
    func replacing(_ key: String, with value: TestJSON) -> TestJSON {
        guard case .object(let members) = self else { return self }
        return .object(members.map { $0.key == key ? Member(key, value) : $0 })
    }
}
