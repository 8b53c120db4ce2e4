/// One row of a profile's block history, as the parent's page lists it.
public struct HistoryRow: Sendable, Equatable {
    public var domain: String
    public var reason: String
    public var category: String?
    public var client: String
    public var count: Int
    public var firstSeen: Int64
    public var lastSeen: Int64

    public init(
        domain: String, reason: String, category: String?, client: String, count: Int, firstSeen: Int64,
        lastSeen: Int64
    ) {
        self.domain = domain
        self.reason = reason
        self.category = category
        self.client = client
        self.count = count
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}

/// A child's day as the parent's page shows it (docs/parent-page.md): counts since a
/// moment, and the block history newest first.
extension Store {
    /// Queries and blocks of `profile` in the hours from that of `since` on, from the
    /// hourly activity: a few rows a day, however many hits the history holds.
    public func dayCounts(profile: String, since: Int64) throws(StoreError) -> (queries: Int, blocks: Int) {
        try hours(profile: profile, from: since - since % 3_600, to: .max).reduce((0, 0)) {
            ($0.queries + $1.queries, $0.blocks + $1.blocks)
        }
    }

    /// The block history's query: read from the end of `hit_history_profile_last_seen`.
    static let historyQuery = """
        SELECT domain, reason, category, client, count, first_seen, last_seen FROM hit_history
        WHERE profile = ?1 AND last_seen < ?2 AND \(historyFilter)
        ORDER BY last_seen DESC, domain LIMIT ?6
        """

    /// The same with the other gateways' rows (docs/two-gateways.md): a row each gateway
    /// counted is one row, its counts added.
    static let sharedHistoryQuery = """
        SELECT domain, reason, max(category), client, sum(count), min(first_seen), max(last_seen) FROM (
            SELECT domain, reason, category, client, source, bucket, count, first_seen, last_seen FROM hit_history
            WHERE profile = ?1 AND \(historyFilter)
            UNION ALL
            SELECT domain, reason, category, client, source, bucket, count, first_seen, last_seen
            FROM shared_hit_history WHERE profile = ?1 AND \(historyFilter))
        GROUP BY domain, reason, client, source, bucket HAVING max(last_seen) < ?2
        ORDER BY max(last_seen) DESC, domain LIMIT ?6
        """

    static let historyFilter = """
        (?3 IS NULL OR client = ?3) AND (?4 IS NULL OR reason = ?4 OR reason LIKE ?4 || ':%')
            AND (?5 IS NULL OR domain = ?5 OR domain LIKE '%.' || ?5)
        """

    /// Blocks of `profile` last seen before `before`, newest first, at most `limit`;
    /// `client` and `reason` (its kind: `category` matches `category:adult`) filter.
    /// Another gateway's blocks are in it once the shared store brought them.
    public func history(
        profile: String, before: Int64, limit: Int, client: String? = nil, reason: String? = nil,
        domain: String? = nil
    ) throws(StoreError) -> [HistoryRow] {
        try withDatabase { database throws(StoreError) in
            let shared = try database.integer(
                "SELECT EXISTS (SELECT 1 FROM shared_hit_history WHERE profile = ?)", profile)
            return try database.rows(
                shared == 1 ? Self.sharedHistoryQuery : Self.historyQuery, profile, before, client, reason, domain,
                limit
            ) { row in
                HistoryRow(
                    domain: row.text(0), reason: row.text(1), category: row.optionalText(2), client: row.text(3),
                    count: row.int(4), firstSeen: row.int64(5), lastSeen: row.int64(6))
            }
        }
    }
}

/// One hour of a profile's day: queries and blocks counted in it.
public struct DayHour: Sendable, Equatable {
    /// Unix seconds of the hour's start.
    public var hourStart: Int64
    public var queries: Int
    public var blocks: Int

    public init(hourStart: Int64, queries: Int, blocks: Int) {
        self.hourStart = hourStart
        self.queries = queries
        self.blocks = blocks
    }
}

extension Store {
    /// The hours of `profile` from `from` (inclusive) to `to` (exclusive) that have
    /// counts, oldest first, from the hourly activity (a few rows a day, whatever the
    /// number of hits), this gateway's and the others' the shared store brought.
    public func hours(profile: String, from: Int64, to: Int64) throws(StoreError) -> [DayHour] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT hour_start, sum(queries), sum(blocks) FROM (
                    SELECT hour_start, queries, 0 AS blocks FROM activity_hours
                    WHERE profile = ?1 AND hour_start >= ?2 AND hour_start < ?3
                    UNION ALL
                    SELECT hour_start, 0, count FROM activity_counts
                    WHERE profile = ?1 AND kind = 'reason' AND hour_start >= ?2 AND hour_start < ?3
                    UNION ALL
                    SELECT hour_start, iif(kind = 'queries', count, 0), iif(kind = 'reason', count, 0)
                    FROM shared_activity
                    WHERE profile = ?1 AND hour_start >= ?2 AND hour_start < ?3 AND kind IN ('queries', 'reason'))
                GROUP BY hour_start ORDER BY hour_start
                """, profile, from, to
            ) { row in DayHour(hourStart: row.int64(0), queries: row.int(1), blocks: row.int(2)) }
        }
    }

    /// Blocks of `profile` in the hours from `from` on, summed by reason kind and by
    /// category, largest first (with the other gateways' the shared store brought).
    public func blockTotals(
        profile: String, from: Int64
    ) throws(StoreError) -> (
        byReason: [(name: String, count: Int)], byCategory: [(name: String, count: Int)]
    ) {
        try withDatabase { database throws(StoreError) in
            let rows = try database.rows(
                """
                SELECT kind, name, sum(count) AS total FROM (
                    SELECT kind, name, count FROM activity_counts
                    WHERE profile = ?1 AND hour_start >= ?2 AND kind IN ('reason', 'category')
                    UNION ALL
                    SELECT kind, name, count FROM shared_activity
                    WHERE profile = ?1 AND hour_start >= ?2 AND kind IN ('reason', 'category'))
                GROUP BY kind, name ORDER BY total DESC, name
                """, profile, from
            ) { row in (kind: row.text(0), name: row.text(1), count: row.int(2)) }
            return (
                rows.filter { $0.kind == "reason" }.map { ($0.name, $0.count) },
                rows.filter { $0.kind == "category" }.map { ($0.name, $0.count) }
            )
        }
    }
}
