import Gateway
import Sync
import Zoneinfo

/// Times as `status` and `hits` show them.
enum StatusText {
    /// `2026-11-30 13:45:02 UTC`.
    static func time(_ unixSeconds: Int64) -> String {
        let local = ZoneRules.utc.localDateTime(at: unixSeconds)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(local.year)-\(two(local.month))-\(two(local.day)) \(two(local.hour)):\(two(local.minute)):\(two(local.second)) UTC"
    }

    static func rfc3339(_ unixSeconds: Int64) -> String { ReportPayloads.timestamp(unixSeconds) }

    /// `3 s`, `5 min`, `2 h` ago.
    static func ago(_ seconds: Int64) -> String {
        if seconds < 90 { return "\(max(0, seconds)) s ago" }
        if seconds < 5400 { return "\(seconds / 60) min ago" }
        if seconds < 172_800 { return "\(seconds / 3600) h ago" }
        return "\(seconds / 86_400) d ago"
    }
}
