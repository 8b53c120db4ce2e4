/// Blocked queries of one (profile, name, reason, client, source), aggregated over a
/// time span (docs/sync.md#hits): one row of the hit queue, of a batch, or of the history.
public struct HitRow: Sendable, Equatable {
    public var profile: String
    /// The blocked name, normalised.
    public var domain: String
    /// The list entry that matched, when there was one.
    public var matched: String?
    /// The reason text, e.g. `category:adult`, `blocked_domain:reddit.com`, `downtime`.
    public var reason: String
    public var category: String?
    /// The client's IP address, or `*` for rows the queue bound merged.
    public var client: String
    /// `dns` or `proxy`.
    public var source: String
    /// Blocked queries (or refused proxy requests) in the span.
    public var count: Int
    /// Unix seconds.
    public var firstSeen: Int64
    public var lastSeen: Int64
    /// The policy version that blocked them (the newest, after merging).
    public var policyVersion: Int
    /// 0 for the name asked; else the names folded into this row, whose `domain` is then
    /// `*.RULE` (or `*` for a reason without a rule) (docs/sync.md#bounds).
    public var names: Int

    public init(
        profile: String, domain: String, matched: String?, reason: String, category: String?,
        client: String, source: String, count: Int, firstSeen: Int64, lastSeen: Int64, policyVersion: Int,
        names: Int = 0
    ) {
        self.profile = profile
        self.domain = domain
        self.matched = matched
        self.reason = reason
        self.category = category
        self.client = client
        self.source = source
        self.count = count
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.policyVersion = policyVersion
        self.names = names
    }

    /// The domain of a row whose names were folded into `rule`: `*.RULE`, or `*` without
    /// a rule (the reason then says what was blocked).
    public static func foldedDomain(rule: String?) -> String {
        rule.map { "*." + $0 } ?? "*"
    }

    /// The client that stands for every client in a row the queue bound merged.
    public static let mergedClient = "*"

    /// An upper estimate of this row's size as one event of a `blocked_attempt` report,
    /// `{"domain":…,"matched":…,"reason":…,"category":…,"client":…,"source":…,"count":N,
    /// "first_seen":"RFC 3339","last_seen":"RFC 3339"}` plus its separating comma. Over-
    /// rather than under-estimates escapes, so a batch cut by it stays under the limit.
    public var estimatedJSONBytes: Int {
        let strings =
            [domain, reason, client, source].reduce(0) { $0 + Self.jsonStringBytes($1) }
            + Self.jsonStringBytes(matched) + Self.jsonStringBytes(category)
        return Self.eventSkeletonBytes + strings + String(count).utf8.count
            + (names > 0 ? #","names":"#.utf8.count + String(names).utf8.count : 0)
    }

    /// Keys, punctuation, the two timestamps and the comma after the event.
    private static let eventSkeletonBytes = #"""
        {"domain":,"matched":,"reason":,"category":,"client":,"source":,"count":,\#
        "first_seen":"2026-01-01T00:00:00Z","last_seen":"2026-01-01T00:00:00Z"},
        """#.utf8.count

    private static func jsonStringBytes(_ text: String?) -> Int {
        guard let text else { return 4 }  // null
        var bytes = 2  // quotes
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += 2
            case 0..<0x20: bytes += 6  // \u00XX
            default: bytes += 1
            }
        }
        return bytes
    }
}

/// A batch of queued hits for one `blocked_attempt` report (docs/sync.md#hits). Formed once and
/// stored: until `completeBatch` (a 202) or `deadLetter` (a 400), `nextBatch` returns the
/// same id, rows and merged count, so a resend after a lost reply can be de-duplicated.
public struct Batch: Sendable, Equatable {
    /// A random UUID (version 4), lowercase: the report's `batch_id`.
    public var id: String
    public var profile: String
    /// Oldest first.
    public var events: [HitRow]
    /// Rows the queue bound folded away before this batch: the report's `merged_events`.
    public var mergedEvents: Int
    /// Unix seconds: the earliest first_seen and the latest last_seen of the events.
    public var windowStart: Int64
    public var windowEnd: Int64
    /// Every event of a batch was blocked under this policy version.
    public var policyVersion: Int

    public init(
        id: String, profile: String, events: [HitRow], mergedEvents: Int,
        windowStart: Int64, windowEnd: Int64, policyVersion: Int
    ) {
        self.id = id
        self.profile = profile
        self.events = events
        self.mergedEvents = mergedEvents
        self.windowStart = windowStart
        self.windowEnd = windowEnd
        self.policyVersion = policyVersion
    }
}

extension HitRow {
    /// The columns `init(row:)` reads, in order; shared by the queue's and dead letter's queries.
    static let columns =
        "profile, domain, matched, reason, category, client, source, count, first_seen, last_seen, policy_version, names"

    /// Reads `columns` starting at column `first`.
    init(row: Row, from first: Int32 = 0) {
        self.init(
            profile: row.text(first), domain: row.text(first + 1), matched: row.optionalText(first + 2),
            reason: row.text(first + 3), category: row.optionalText(first + 4), client: row.text(first + 5),
            source: row.text(first + 6), count: row.int(first + 7), firstSeen: row.int64(first + 8),
            lastSeen: row.int64(first + 9), policyVersion: row.int(first + 10), names: row.int(first + 11))
    }
}
