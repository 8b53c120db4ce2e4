import Foundation
import HTTPClient
import TestSupport
import Testing

/// docs/sync.md: `since_version`, 304 with no body, 404 for no active policy, and the policy
/// modelled apart from its active state: pause, a switch to a lower version, a birthday.
@Suite(.blocking) struct PolicyEndpointTests {
    @Test func fact7_sinceVersionAtOrAboveTheCurrentVersionIs304WithoutBodyOrContentType() throws {
        let harness = try Harness()
        for since in ["42", "43", "+42", "1000000"] {
            let response = try harness.policy(since: since)
            #expect(response.status == 304, "since_version=\(since)")
            #expect(response.body.isEmpty)
            #expect(response.header("Content-Type") == nil && response.header("Content-Length") == nil)
            #expect(response.header("X-RateLimit-Remaining") != nil)
        }
        for since in ["41", "0", "-1"] { #expect(try harness.policy(since: since).status == 200) }
        // All on one kept-alive connection: a 304 without a length does not confuse the framing.
        #expect(harness.fake.connectionsAccepted == 1)
    }

    @Test func fact7_aSinceVersionThatIsNotAnIntIsIgnored() throws {
        let harness = try Harness()
        for since in ["abc", "1.5", "", "42abc", " 42", "0x2a", "99999999999999999999"] {
            let response = try harness.policy(since: since)
            #expect(response.status == 200, "since_version=\(since)")
            #expect(response.json?["version"] == 42)
        }
        #expect(harness.fake.requests.last?.queryItems.first?.1 == "99999999999999999999")
    }

    @Test func fact7_pausingTheOnlyPolicyGives404AndResumingBumpsTheVersion() throws {
        let harness = try Harness()
        harness.fake.setPolicyStatus(harness.policyID, .paused)
        for since in [nil, "42", "100"] {
            let response = try harness.policy(since: since)
            #expect(response.status == 404 && response.bodyText == errorBody(404, "policy not found"))
        }
        harness.fake.setPolicyStatus(harness.policyID, .active)
        let resumed = try harness.policy(since: "42")
        #expect(resumed.status == 200 && resumed.json?["version"] == 44)  // +1 pause, +1 activate
        #expect(resumed.json?["status"] == "active")
    }

    @Test func fact7_aSwitchToALowerVersionPolicyIsASpurious304UntilAnUnconditionalFetch() throws {
        let harness = try Harness()
        #expect(try harness.policy().json?["version"] == 42)
        // The emergency-lockdown policy (priority 9999, version 8) takes over when the
        // normal one is paused.
        var lockdown = try FakePolicy(compiledPolicyJSON: try fixture("policy-edge-emergency-lockdown-age12.json"))
        lockdown.priority = 9999
        harness.fake.addPolicy(lockdown, to: harness.childID)
        #expect(try harness.policy().json?["policy_id"]?.string == harness.policyID)  // the lowest number wins
        harness.fake.setPolicyStatus(harness.policyID, .paused)
        #expect(harness.fake.selectedPolicy(for: harness.childID)?.policyID == lockdown.policyID)
        #expect(try harness.policy(since: "42").status == 304)  // stale: 8 <= 42
        let full = try #require(try harness.policy().json)
        #expect(full["policy_id"]?.string == lockdown.policyID && full["version"] == 8)
        #expect(full["web_filter"]?["safe_search"] == false)
    }

    @Test func fact7_aBirthdayChangesTheAgeFieldsButNotTheVersion() throws {
        let harness = try Harness()
        let before = try #require(try harness.policy().json)
        #expect(before["child_age"] == 10 && before["age_group"] == "Pre-Teen")
        harness.fake.setChildAge(harness.childID, 13)
        #expect(try harness.policy(since: "42").status == 304)
        let after = try #require(try harness.policy().json)
        #expect(after["version"] == 42 && after["child_age"] == 13 && after["age_group"] == "Teen")
        #expect(after["content_filter"]?["age_rating"] == "12+")
        #expect(after["content_filter"]?["max_ratings"]?["esrb"] == "T")
    }

    @Test func theBodyOverrideServesAnyDocument() throws {
        let harness = try Harness()
        harness.fake.policyBodyOverride = #"{"version":0,"child_id":"someone-else"}"#
        let response = try harness.policy()
        #expect(response.status == 200 && response.bodyText == "{\"version\":0,\"child_id\":\"someone-else\"}\n")
        #expect(try harness.policy(since: "42").status == 304)  // the stored version still decides
        harness.fake.policyBodyOverride = nil
        #expect(try harness.policy().json?["version"] == 42)
        harness.fake.injectFault(.serverError, on: .policy)
        #expect(try harness.policy().bodyText == errorBody(500, "internal server error"))
    }
}

/// The example policies shared with PolicyTests.
func fixture(_ name: String) throws -> String {
    let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    return try String(contentsOf: tests.appendingPathComponent("PolicyTests/Fixtures/\(name)"), encoding: .utf8)
}
