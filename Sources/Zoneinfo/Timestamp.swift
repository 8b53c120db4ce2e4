/// Instants as RFC 3339 text in UTC (`2026-12-06T18:30:00Z`): the form of reports to the
/// API, `status --json` and the parent's page.
public enum Timestamp {
    public static func rfc3339(_ unixSeconds: Int64) -> String {
        let utc = ZoneRules.utc.localDateTime(at: unixSeconds)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(utc.year)-\(two(utc.month))-\(two(utc.day))T\(two(utc.hour)):\(two(utc.minute)):\(two(utc.second))Z"
    }
}
