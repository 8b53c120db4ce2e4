import Foundation

/// CompiledPolicy documents shaped like the server's (docs/sync.md), with the web and
/// time parts a test cares about.
public enum PolicyDocuments {
    public static func json(
        level: String = "", safeSearch: Bool = false, blocked: [String] = [], allowed: [String] = [],
        categories: [String] = [], screenTime: String = #""daily_limit_minutes": 0"#,
        version: Int = 3
    ) -> String {
        func list(_ items: [String]) -> String {
            "[" + items.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined(separator: ",")
                + "]"
        }
        return """
            {"version": \(version), "child_id": "00000000-0000-0000-0000-0000000000c1", "child_age": 9, "age_group": "Child",
             "policy_id": "00000000-0000-0000-0000-0000000000p1", "status": "active", "generated_at": "2026-03-31T14:05:09.4Z",
             "content_filter": {"age_rating": "9+", "max_ratings": {}, "blocked_apps": [], "allowed_apps": [], "allowlist_mode": false},
             "screen_time": {\(screenTime), "always_allowed_apps": []},
             "purchases": {"require_approval": false, "block_iap": false},
             "privacy": {"location_sharing_enabled": false, "profile_visibility": "", "account_creation_approval": false,
                         "data_sharing_restricted": false},
             "social": {"chat_mode": "", "dm_restriction": "", "multiplayer_mode": ""}, "notifications": {},
             "web_filter": {"level": "\(level)", "safe_search": \(safeSearch), "blocked_domains": \(list(blocked)),
                            "allowed_domains": \(list(allowed)), "blocked_categories": \(list(categories))}}
            """
    }

    /// Noon on a Tuesday, UTC: where tests of the real binary start its wall clock
    /// (`GateRun.wallClock(PolicyDocuments.noon)`) when the time of day matters, with the
    /// policy's windows written around it — so they pass at any hour, midnight included.
    public static let noon = "2026-12-01T12:00:00Z"

    /// A downtime window on every day, `start` to `end` ("HH:MM"), as `screen_time` members.
    public static func downtime(_ start: String, _ end: String) -> String {
        #""downtime_windows": [{"start_time": "\#(start)", "end_time": "\#(end)"}]"#
    }
}
