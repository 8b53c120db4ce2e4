/// Recent blocks of one profile and name, for `phosra-gate hits`: what the child ran into.
public struct HistoryGroup: Sendable, Equatable {
    public var profile: String
    public var domain: String
    /// Blocked queries in the period.
    public var count: Int
    /// Distinct reason texts, most frequent first (ties by name).
    public var reasons: [String]
    /// Distinct categories, most frequent first (ties by name).
    public var categories: [String]
    /// Distinct clients, most frequent first (ties by name).
    public var clients: [String]
    /// Unix seconds.
    public var firstSeen: Int64
    public var lastSeen: Int64
    /// 0 for the name asked; else the names folded into `*.RULE` or `*` (docs/sync.md#bounds).
    public var names: Int

    public init(
        profile: String, domain: String, count: Int, reasons: [String], categories: [String],
        clients: [String], firstSeen: Int64, lastSeen: Int64, names: Int = 0
    ) {
        self.profile = profile
        self.domain = domain
        self.count = count
        self.reasons = reasons
        self.categories = categories
        self.clients = clients
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.names = names
    }
}

/// The local hit history (`hit_retention`, docs/sync.md#hits), kept apart from the queue: a row
/// delivered and deleted from the queue stays in the history.
extension Store {
    /// History rows are summed per key and per bucket of this many seconds (by
    /// first_seen), so a week of 5-second flushes stays small; `recentHits(since:)` is
    /// therefore exact to within one bucket.
    public static let historyBucketSeconds: Int64 = 300

    /// Adds hits to the history in one transaction; `rows` may be lazy, as for `enqueue`.
    /// Then the history bound applies (`maxRows`, all profiles together); returns the rows it
    /// merged away or dropped (0 within the bound).
    @discardableResult
    public func recordHistory(_ rows: some Sequence<HitRow>, maxRows: Int = .max) throws(StoreError) -> Int {
        try write { database throws(StoreError) in
            for row in rows {
                try database.run(
                    """
                    INSERT INTO hit_history (profile, domain, reason, client, source, bucket, matched, category,
                        count, first_seen, last_seen, names)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (profile, domain, reason, client, source, bucket) DO UPDATE SET
                        count = count + excluded.count,
                        names = names + excluded.names,
                        matched = CASE WHEN excluded.last_seen >= last_seen THEN excluded.matched ELSE matched END,
                        category = CASE WHEN excluded.last_seen >= last_seen THEN excluded.category ELSE category END,
                        first_seen = min(first_seen, excluded.first_seen),
                        last_seen = max(last_seen, excluded.last_seen)
                    """, row.profile, row.domain, row.reason, row.client, row.source,
                    Self.bucket(of: row.firstSeen), row.matched, row.category, row.count, row.firstSeen, row.lastSeen,
                    row.names)
            }
            return try Self.applyHistoryBound(maxRows: maxRows, database)
        }
    }

    /// Blocks seen at or after `since` (of one profile, or all), grouped by (profile,
    /// domain), the most recently seen first: this gateway's, and with `everyGateway` the
    /// other gateways' the shared store brought as well (docs/two-gateways.md).
    public func recentHits(
        since: Int64, profile: String? = nil, everyGateway: Bool = false
    ) throws(StoreError) -> [HistoryGroup] {
        struct Part {
            let profile: String, domain: String, reason: String, category: String?, client: String
            let count: Int, firstSeen: Int64, lastSeen: Int64, names: Int
        }
        let parts = try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT profile, domain, reason, category, client, sum(count), min(first_seen), max(last_seen),
                    sum(names)
                FROM (
                    SELECT profile, domain, reason, category, client, count, first_seen, last_seen, names
                    FROM hit_history
                    UNION ALL
                    SELECT profile, domain, reason, category, client, count, first_seen, last_seen, names
                    FROM shared_hit_history WHERE ?3)
                WHERE last_seen >= ?1 AND (?2 IS NULL OR profile = ?2)
                GROUP BY profile, domain, reason, category, client
                """, since, profile, everyGateway
            ) { row in
                Part(
                    profile: row.text(0), domain: row.text(1), reason: row.text(2), category: row.optionalText(3),
                    client: row.text(4), count: row.int(5), firstSeen: row.int64(6), lastSeen: row.int64(7),
                    names: row.int(8))
            }
        }
        struct Key: Hashable { let profile: String, domain: String }
        var grouped: [Key: [Part]] = [:]
        for part in parts { grouped[Key(profile: part.profile, domain: part.domain), default: []].append(part) }
        return grouped.map { key, parts in
            HistoryGroup(
                profile: key.profile, domain: key.domain, count: parts.reduce(0) { $0 + $1.count },
                reasons: Self.byFrequency(parts.map { ($0.reason, $0.count) }),
                categories: Self.byFrequency(parts.compactMap { part in part.category.map { ($0, part.count) } }),
                clients: Self.byFrequency(parts.map { ($0.client, $0.count) }),
                firstSeen: parts.map(\.firstSeen).min() ?? 0, lastSeen: parts.map(\.lastSeen).max() ?? 0,
                names: parts.reduce(0) { $0 + $1.names })
        }.sorted { ($1.lastSeen, $0.profile, $0.domain) < ($0.lastSeen, $1.profile, $1.domain) }
    }

    /// Deletes history last seen before `before` (the `hit_retention` horizon); returns how many rows.
    @discardableResult
    public func pruneHistory(before: Int64) throws(StoreError) -> Int {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM hit_history WHERE last_seen < ?", before)
            let changes = database.changes
            // Gone by age on every gateway alike: nothing to tell the shared store.
            try database.run("DELETE FROM hit_history_gone WHERE last_seen < ?", before)
            try database.run("DELETE FROM shared_hit_history WHERE last_seen < ?", before)
            return changes
        }
    }

    static func bucket(of time: Int64) -> Int64 {
        time >= 0 ? time / historyBucketSeconds : (time - historyBucketSeconds + 1) / historyBucketSeconds
    }

    /// Distinct names by summed count, highest first, then by name.
    private static func byFrequency(_ counted: [(String, Int)]) -> [String] {
        var totals: [String: Int] = [:]
        for (name, count) in counted { totals[name, default: 0] += count }
        return totals.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map(\.key)
    }
}
