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
        WHERE profile = ?1 AND last_seen < ?2 AND (?3 IS NULL OR client = ?3)
            AND (?4 IS NULL OR reason = ?4 OR reason LIKE ?4 || ':%')
            AND (?5 IS NULL OR domain = ?5 OR domain LIKE '%.' || ?5)
        ORDER BY last_seen DESC, domain LIMIT ?6
        """

    /// Blocks of `profile` last seen before `before`, newest first, at most `limit`;
    /// `client` and `reason` (its kind: `category` matches `category:adult`) filter.
    public func history(
        profile: String, before: Int64, limit: Int, client: String? = nil, reason: String? = nil,
        domain: String? = nil
    ) throws(StoreError) -> [HistoryRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(Self.historyQuery, profile, before, client, reason, domain, limit) { row in
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
    /// number of hits).
    public func hours(profile: String, from: Int64, to: Int64) throws(StoreError) -> [DayHour] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT h.hour_start, h.queries, coalesce(sum(c.count), 0) FROM activity_hours h
                LEFT JOIN activity_counts c ON c.profile = h.profile AND c.hour_start = h.hour_start
                    AND c.kind = 'reason'
                WHERE h.profile = ?1 AND h.hour_start >= ?2 AND h.hour_start < ?3
                GROUP BY h.hour_start ORDER BY h.hour_start
                """, profile, from, to
            ) { row in DayHour(hourStart: row.int64(0), queries: row.int(1), blocks: row.int(2)) }
        }
    }

    /// Blocks of `profile` in the hours from `from` on, summed by reason kind and by
    /// category, largest first.
    public func blockTotals(
        profile: String, from: Int64
    ) throws(StoreError) -> (
        byReason: [(name: String, count: Int)], byCategory: [(name: String, count: Int)]
    ) {
        try withDatabase { database throws(StoreError) in
            let rows = try database.rows(
                """
                SELECT kind, name, sum(count) AS total FROM activity_counts
                WHERE profile = ? AND hour_start >= ? AND kind IN ('reason', 'category')
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
