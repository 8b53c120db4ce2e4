import Config
import Policy
import Store
import SystemIO
import TestSupport
import Testing

@testable import Commands
@testable import Gateway

/// What the start keeps of each profile's policy file, counted by the test executable's
/// malloc (docs/performance.md#the-heap-by-owner): the rules built from it, not the decoded
/// document. A decoded policy holds a string per listed name; kept for every profile until
/// the daemon was up, they were the start's peak and stayed behind as free heap.
@Suite(.blocking) struct SyncSetupMemoryTests {
    static let profiles = 4
    static let names = 3_000

    @Test(.enabled(if: Allocations.counted, "a sanitizer's runtime owns malloc"))
    func theStartKeepsEachProfilesRulesNotItsDecodedPolicy() throws {
        let scratch = try ScratchDirectory()
        var config = "default_profile = none\n"
        var paths: [String] = []
        for profile in 1...Self.profiles {
            let path = try scratch.write("p\(profile).json", Self.policy(profile: profile))
            paths.append(path)
            config += "[profile p\(profile)]\nclients = 10.\(profile).0.0/16\npolicy = \(path)\n"
        }
        let plan = try ProfilePlan.from(
            ConfigFile.parse(config, path: "x.conf", schema: Key.schema), registered: [])
        let store = try Store.open(directory: scratch.path, now: 1_800_000_000)
        defer { store.close() }
        let log = Logger()
        // Once before counting: SQLite's page cache and prepared statements are the store's.
        _ = try SyncSetup(plan: plan, stateDirectory: scratch.path, store: store, log: log)

        var setup: SyncSetup?
        let kept = try Allocations.retainedBytes {
            setup = try SyncSetup(plan: plan, stateDirectory: scratch.path, store: store, log: log)
        }
        var rules: [PolicyRules] = []
        let rulesAlone = try Allocations.retainedBytes {
            rules = try paths.map { PolicyRules(try PolicyFile.load($0)) }
        }
        #expect(setup?.profiles.count == Self.profiles)
        #expect(setup?.localVersions == ["p1": 7, "p2": 7, "p3": 7, "p4": 7])
        #expect(rules.allSatisfy { $0.version == 7 })
        // The decoded documents' strings alone would be about 1 MB more.
        #expect(kept < rulesAlone + 100_000, "the setup keeps \(kept) bytes, the rules alone \(rulesAlone)")
    }

    static func policy(profile: Int) -> String {
        let domains = (1...names).map { "\"parent-listed-\(profile)-\($0).example\"" }.joined(separator: ",")
        return """
            {"version":7,"child_id":"00000000-0000-0000-0000-000000000001","child_age":10,"age_group":"Pre-Teen",\
            "policy_id":"00000000-0000-0000-0000-00000000000\(profile)","status":"active",\
            "generated_at":"2026-01-01T00:00:00Z",\
            "content_filter":{"age_rating":"9+","max_ratings":{},"blocked_apps":[],"allowed_apps":[],\
            "allowlist_mode":false},"screen_time":{"daily_limit_minutes":0,"always_allowed_apps":[]},\
            "purchases":{"require_approval":false,"block_iap":false},\
            "web_filter":{"level":"","safe_search":false,"allowed_domains":[],"blocked_categories":["adult"],\
            "blocked_domains":[\(domains)]}}
            """
    }
}
