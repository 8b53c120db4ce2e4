import Foundation
import Testing

@testable import Policy

@Suite struct CompiledPolicyDecodingTests {
    private func decode(_ json: String) throws(PolicyDecodingError) -> CompiledPolicy {
        try CompiledPolicy.decode(Array(json.utf8))
    }

    @Test func emptyObjectGivesDefaults() throws {
        let policy = try decode("{}")
        #expect(policy.version == 0)
        #expect(policy.webFilter == CompiledPolicy.WebFilter())
        #expect(policy.screenTime.schedule == nil)
        #expect(policy.screenTime.downtimeWindows.isEmpty)
    }

    @Test func unknownKeysIgnoredAndNullsEmpty() throws {
        let policy = try decode(
            """
            {"version": 7, "future_section": {"x": [1, 2]}, "screen_time": {"downtime_windows": null, "schedule": null,
             "daily_limit_minutes": 30, "per_app_limits": [{"bundle_id": "a", "daily_minutes": 5}]},
             "web_filter": {"level": null, "safe_search": null, "blocked_domains": null, "allowed_domains": ["a.example", null],
             "blocked_categories": [], "new_flag": true}}
            """)
        #expect(policy.version == 7)
        #expect(policy.screenTime.dailyLimitMinutes == 30)
        #expect(policy.webFilter.level == "")
        #expect(policy.webFilter.blockedDomains == [])
        #expect(policy.webFilter.allowedDomains == ["a.example"])
    }

    @Test func missingScheduleHalvesAndWindowKeys() throws {
        let policy = try decode(
            """
            {"screen_time": {"schedule": {"weekday": {"start": "07:00"}}, "downtime_windows": [{"start_time": "21:00", "end_time": "06:00"}]}}
            """)
        #expect(policy.screenTime.schedule == .init(weekday: .init(start: "07:00", end: ""), weekend: .init()))
        #expect(policy.screenTime.downtimeWindows == [.init(daysOfWeek: nil, startTime: "21:00", endTime: "06:00")])
    }

    @Test(arguments: [
        (#"{"web_filter": {"level": 5}}"#, "web_filter.level: expected a string"),
        (#"{"web_filter": {"blocked_domains": ["a.example", 5]}}"#, "web_filter.blocked_domains[1]: expected a string"),
        (#"{"web_filter": "strict"}"#, "web_filter: expected an object"),
        (#"{"version": "42"}"#, "version: expected an integer"),
        (#"{"web_filter": {"safe_search": "yes"}}"#, "web_filter.safe_search: expected true or false"),
        (
            #"{"screen_time": {"downtime_windows": [{"days_of_week": "mon"}]}}"#,
            "screen_time.downtime_windows[0].days_of_week: expected an array"
        ),
        (#"[]"#, "(top level): expected an object"),
    ])
    func wrongTypesNameTheirPath(json: String, message: String) {
        #expect(throws: PolicyDecodingError.self) { try decode(json) }
        do {
            _ = try decode(json)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test(arguments: ["", "not json", "{\"version\": 1", "{\"a\":}"])
    func brokenJSONIsReportedAtTheTop(json: String) {
        do {
            _ = try decode(json)
            Issue.record("decoded \(json)")
        } catch {
            #expect(error.path == "(top level)")
            #expect(error.problem.hasPrefix("not valid JSON"))
        }
    }
}
