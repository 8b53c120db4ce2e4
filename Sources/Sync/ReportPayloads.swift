import FoundationEssentials
import Zoneinfo

/// The JSON the gateway sends to `POST /device/report` (docs/sync.md#enforcement-report, docs/sync.md):
/// always an object payload, `report_type` well under 50 characters, RFC 3339 UTC times.
public enum ReportPayloads {
    public struct Envelope<Payload: Encodable>: Encodable {
        let reportType: String
        let reportedAt: String
        let payload: Payload

        enum CodingKeys: String, CodingKey {
            case reportType = "report_type"
            case reportedAt = "reported_at"
            case payload
        }
    }

    public struct EnforcementStatus: Encodable {
        let policyVersion: Int
        let results: [EnforcementResult]
        enum CodingKeys: String, CodingKey {
            case policyVersion = "policy_version"
            case results
        }
    }

    public struct BlockedEvent: Encodable, Equatable {
        public let domain: String
        public let matched: String?
        public let reason: String
        public let category: String?
        public let client: String
        public let source: String
        public let count: Int
        public let firstSeen: String
        public let lastSeen: String
        /// Names folded into this event (`domain` `*.RULE` or `*`), sent only when not 0.
        public let names: Int

        public init(
            domain: String, matched: String?, reason: String, category: String?, client: String, source: String,
            count: Int, firstSeen: Int64, lastSeen: Int64, names: Int = 0
        ) {
            self.domain = domain
            self.matched = matched
            self.reason = reason
            self.category = category
            self.client = client
            self.source = source
            self.count = count
            self.firstSeen = ReportPayloads.timestamp(firstSeen)
            self.lastSeen = ReportPayloads.timestamp(lastSeen)
            self.names = names
        }

        enum CodingKeys: String, CodingKey {
            case domain, matched, reason, category, client, source, count, names
            case firstSeen = "first_seen"
            case lastSeen = "last_seen"
        }

        // `matched` and `category` are sent as null rather than left out.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(domain, forKey: .domain)
            try container.encode(matched, forKey: .matched)
            try container.encode(reason, forKey: .reason)
            try container.encode(category, forKey: .category)
            try container.encode(client, forKey: .client)
            try container.encode(source, forKey: .source)
            try container.encode(count, forKey: .count)
            try container.encode(firstSeen, forKey: .firstSeen)
            try container.encode(lastSeen, forKey: .lastSeen)
            if names > 0 { try container.encode(names, forKey: .names) }
        }
    }

    public struct BlockedAttempt: Encodable {
        let batchID: String
        let policyVersion: Int
        let windowStart: String
        let windowEnd: String
        let events: [BlockedEvent]
        let mergedEvents: Int
        enum CodingKeys: String, CodingKey {
            case batchID = "batch_id"
            case policyVersion = "policy_version"
            case windowStart = "window_start"
            case windowEnd = "window_end"
            case events
            case mergedEvents = "merged_events"
        }
    }

    public struct WebActivity: Encodable {
        let hourStart: String
        let hourEnd: String
        let queries: Int
        let blocksByReason: [String: Int]
        let blocksByCategory: [String: Int]
        let rewritesByEngine: [String: Int]
        enum CodingKeys: String, CodingKey {
            case hourStart = "hour_start"
            case hourEnd = "hour_end"
            case queries
            case blocksByReason = "blocks_by_reason"
            case blocksByCategory = "blocks_by_category"
            case rewritesByEngine = "rewrites_by_engine"
        }
    }

    public static func enforcementStatus(version: Int, results: [EnforcementResult], at now: Int64) -> [UInt8] {
        encode(
            Envelope(
                reportType: "enforcement_status", reportedAt: timestamp(now),
                payload: EnforcementStatus(policyVersion: version, results: results)))
    }

    public static func blockedAttempt(
        batchID: String, version: Int, windowStart: Int64, windowEnd: Int64,
        events: [BlockedEvent], merged: Int, at now: Int64
    ) -> [UInt8] {
        encode(
            Envelope(
                reportType: "blocked_attempt", reportedAt: timestamp(now),
                payload: BlockedAttempt(
                    batchID: batchID, policyVersion: version, windowStart: timestamp(windowStart),
                    windowEnd: timestamp(windowEnd),
                    events: events, mergedEvents: merged)))
    }

    public static func webActivity(
        hourStart: Int64, queries: Int, byReason: [String: Int], byCategory: [String: Int],
        byEngine: [String: Int], at now: Int64
    ) -> [UInt8] {
        encode(
            Envelope(
                reportType: "web_activity", reportedAt: timestamp(now),
                payload: WebActivity(
                    hourStart: timestamp(hourStart), hourEnd: timestamp(hourStart + 3600), queries: queries,
                    blocksByReason: byReason, blocksByCategory: byCategory, rewritesByEngine: byEngine)))
    }

    struct ScreenTime: Encodable {
        struct App: Encodable {
            let bundleID: String
            let bundleIDs: [String]
            let service: String
            let minutes: Int
            enum CodingKeys: String, CodingKey {
                case bundleID = "bundle_id"
                case bundleIDs = "bundle_ids"
                case service, minutes
            }
        }
        let date: String
        let totalMinutes: Int
        let byCategory: [String: Int]
        let topApps: [App]
        let detail: String
        enum CodingKeys: String, CodingKey {
            case date
            case totalMinutes = "total_minutes"
            case byCategory = "by_category"
            case topApps = "top_apps"
            case detail
        }
    }

    public static func screenTime(_ report: ScreenTimeReport, at now: Int64) -> [UInt8] {
        encode(
            Envelope(
                reportType: "screen_time", reportedAt: timestamp(now),
                payload: ScreenTime(
                    date: report.date, totalMinutes: report.totalMinutes, byCategory: report.byCategory,
                    topApps: report.topApps.map {
                        ScreenTime.App(
                            bundleID: $0.bundleID, bundleIDs: $0.bundleIDs, service: $0.service, minutes: $0.minutes)
                    }, detail: ScreenTimeReport.detail)))
    }

    static func encode(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Only strings, numbers and nulls: encoding cannot fail.
        return Array((try? encoder.encode(value)) ?? Data("{}".utf8))
    }

    /// `2026-03-31T14:20:00Z` (RFC 3339, UTC) for unix seconds.
    public static func timestamp(_ unixSeconds: Int64) -> String { Timestamp.rfc3339(unixSeconds) }
}
