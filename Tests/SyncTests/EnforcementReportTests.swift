import TestSupport
import Testing

@testable import Policy
@testable import Sync

@Suite(.blocking) struct EnforcementReportTests {
    private func report(
        _ edit: (inout CompiledPolicy) -> Void, listed: Set<Category> = Set(Category.allCases)
    )
        -> [String: EnforcementResult]
    {
        var policy = CompiledPolicy()
        policy.version = 7
        edit(&policy)
        let results = EnforcementReport.results(for: policy, rules: PolicyRules(policy), listed: listed)
        return Dictionary(uniqueKeysWithValues: results.map { ($0.category, $0) })
    }

    @Test func onlyTheRuleCategoriesThePolicySets() {
        #expect(report { _ in }.isEmpty)
        let all = report { policy in
            policy.webFilter.level = "strict"
            policy.webFilter.safeSearch = true
            policy.webFilter.blockedCategories = ["porn"]
            policy.webFilter.blockedDomains = ["a.example"]
            policy.webFilter.allowedDomains = ["b.example"]
            policy.screenTime.downtimeWindows = [.init(startTime: "21:00", endTime: "07:00")]
            policy.screenTime.schedule = .init()
            policy.screenTime.dailyLimitMinutes = 90
            policy.privacy.dataSharingRestricted = true
        }
        #expect(
            all.mapValues(\.status) == [
                "web_filter_level": "enforced", "web_safesearch": "enforced", "web_category_block": "enforced",
                "web_custom_blocklist": "enforced", "web_custom_allowlist": "enforced", "time_downtime": "enforced",
                "time_scheduled_hours": "enforced", "time_daily_limit": "partial",
                "privacy_data_sharing": "enforced",
            ])
        #expect(
            all["time_daily_limit"]?.detail
                == "minutes online estimated from network activity; background services not counted")
        #expect(all.values.allSatisfy { $0.framework == "phosra-gate" })
    }

    @Test func partialResultsNameWhatWasNotEnforced() {
        let results = report(
            { policy in
                policy.webFilter.level = "Extreme"
                policy.webFilter.blockedCategories = ["gambling", "crypto"]
                policy.webFilter.blockedDomains = ["com", "ok.example"]
                policy.webFilter.allowedDomains = ["site.example/page"]
                policy.screenTime.downtimeWindows = [
                    .init(daysOfWeek: ["mon", "funday"], startTime: "25:00", endTime: "07:00")
                ]
                policy.screenTime.schedule = .init(weekday: .init(start: "07:00", end: ""))
            }, listed: [.adult, .malware, .phishing, .proxy])
        #expect(results["web_filter_level"]?.status == "partial")
        #expect(results["web_filter_level"]?.detail.contains("unknown level \"Extreme\"") == true)
        #expect(results["web_filter_level"]?.detail.contains("no list for gambling, dating, drugs, piracy") == true)
        #expect(results["web_category_block"]?.detail == "unknown category \"crypto\"; no list for gambling")
        #expect(results["web_custom_blocklist"]?.detail.contains("\"com\"") == true)
        #expect(results["web_custom_allowlist"]?.status == "partial")
        #expect(results["time_downtime"]?.detail.contains("void") == true)
        #expect(results["time_downtime"]?.detail.contains("funday") == true)
        #expect(results["time_scheduled_hours"]?.detail.contains("weekday is ignored") == true)
    }

    @Test func aRejectedPolicyIsReportedFailed() {
        let results = EnforcementReport.rejected(reason: "version 0 is not ≥ 1", keeping: 41)
        #expect(results.map(\.status) == ["failed"])
        #expect(results.first?.detail == "version 0 is not ≥ 1; still enforcing version 41")
    }

    @Test func appsAreReportedByTheirServices() throws {
        let services = try ServiceCatalogue.decode(
            Array(
                #"{"format": 1, "services": [{"id": "tiktok", "kind": "social", "bundle_ids": {"ios": ["com.zhiliaoapp.musically"]}, "domains": ["tiktok.com"], "source": "t"}]}"#
                    .utf8))
        var policy = CompiledPolicy()
        policy.contentFilter.blockedApps = ["com.zhiliaoapp.musically", "com.unknown.app"]
        policy.contentFilter.allowlistMode = true
        policy.screenTime.perAppLimits = [
            .init(bundleID: "com.zhiliaoapp.musically", dailyMinutes: 30),
            .init(bundleID: "com.other.app", dailyMinutes: 5),
        ]
        policy.social.dmRestriction = "contacts_only"
        policy.social.multiplayerMode = "off"
        let results = Dictionary(
            uniqueKeysWithValues: EnforcementReport.results(
                for: policy, rules: PolicyRules(policy), listed: [], services: services
            ).map { ($0.category, $0) })
        #expect(results["content_block_title"]?.status == "partial")
        #expect(results["content_block_title"]?.detail == "no service for com.unknown.app")
        #expect(results["content_allowlist_mode"]?.status == "unsupported")
        #expect(results["time_per_app_limit"]?.status == "partial")
        #expect(results["time_per_app_limit"]?.detail == "no service for com.other.app")
        #expect(results["dm_restriction"]?.status == "partial")
        #expect(results["social_multiplayer"]?.status == "enforced")
        policy.contentFilter.blockedApps = ["com.zhiliaoapp.musically"]
        policy.social.dmRestriction = "none"
        policy.screenTime.perAppLimits.removeLast()
        let whole = EnforcementReport.results(for: policy, rules: PolicyRules(policy), listed: [], services: services)
        #expect(whole.first { $0.category == "content_block_title" }?.status == "enforced")
        #expect(whole.first { $0.category == "dm_restriction" }?.status == "enforced")
        #expect(whole.first { $0.category == "time_per_app_limit" }?.status == "enforced")
    }
}
