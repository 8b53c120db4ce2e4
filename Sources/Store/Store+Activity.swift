/// One profile's counts for one hour: the payload of a `web_activity` report (docs/sync.md#activity).
public struct ActivityRecord: Sendable, Equatable {
    public var profile: String
    /// Unix seconds of the hour's start.
    public var hourStart: Int64
    public var queries: Int
    /// Blocks by reason kind (`category`, `blocked_domain`, `downtime`, …).
    public var blocksByReason: [String: Int]
    public var blocksByCategory: [String: Int]
    /// Safe-search rewrites by engine (`google`, `youtube`, …).
    public var rewritesByEngine: [String: Int]

    public init(
        profile: String, hourStart: Int64, queries: Int, blocksByReason: [String: Int],
        blocksByCategory: [String: Int], rewritesByEngine: [String: Int]
    ) {
        self.profile = profile
        self.hourStart = hourStart
        self.queries = queries
        self.blocksByReason = blocksByReason
        self.blocksByCategory = blocksByCategory
        self.rewritesByEngine = rewritesByEngine
    }
}

/// Hourly activity counts, accumulated as the daemon flushes and sent once per hour.
extension Store {
    /// Adds counts to the profile's hour in one transaction. Counts added to an hour
    /// already sent are kept but not sent again (a report covers an hour once).
    public func addActivity(
        profile: String, hourStart: Int64, queries: Int, blocksByReason: [String: Int] = [:],
        blocksByCategory: [String: Int] = [:], rewritesByEngine: [String: Int] = [:]
    ) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                """
                INSERT INTO activity_hours (profile, hour_start, queries) VALUES (?, ?, ?)
                ON CONFLICT (profile, hour_start) DO UPDATE SET queries = queries + excluded.queries,
                    changes = changes + 1
                """, profile, hourStart, queries)
            for (kind, counts) in [
                ("reason", blocksByReason), ("category", blocksByCategory), ("engine", rewritesByEngine),
            ] {
                for (name, count) in counts {
                    try database.run(
                        """
                        INSERT INTO activity_counts (profile, hour_start, kind, name, count) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (profile, hour_start, kind, name) DO UPDATE SET count = count + excluded.count
                        """, profile, hourStart, kind, name, count)
                }
            }
        }
    }

    /// The profile's hours starting before `hourStart` (so complete, when it is the
    /// current hour's start) that were not sent yet, oldest first.
    public func unsentActivity(profile: String, before hourStart: Int64) throws(StoreError) -> [ActivityRecord] {
        try withDatabase { database throws(StoreError) in
            var records = try database.rows(
                """
                SELECT hour_start, queries FROM activity_hours
                WHERE profile = ? AND hour_start < ? AND sent = 0 ORDER BY hour_start
                """, profile, hourStart
            ) { row in
                ActivityRecord(
                    profile: profile, hourStart: row.int64(0), queries: row.int(1),
                    blocksByReason: [:], blocksByCategory: [:], rewritesByEngine: [:])
            }
            for index in records.indices {
                try database.forEach(
                    """
                    SELECT kind, name, count FROM activity_counts WHERE profile = ? AND hour_start = ?
                    """, profile, records[index].hourStart
                ) { row throws(StoreError) in
                    switch row.text(0) {
                    case "reason": records[index].blocksByReason[row.text(1)] = row.int(2)
                    case "category": records[index].blocksByCategory[row.text(1)] = row.int(2)
                    default: records[index].rewritesByEngine[row.text(1)] = row.int(2)
                    }
                    return true
                }
            }
            return records
        }
    }

    /// The report for the profile's hour was accepted.
    public func markActivitySent(profile: String, hourStart: Int64) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                "UPDATE activity_hours SET sent = 1 WHERE profile = ? AND hour_start = ?", profile, hourStart)
        }
    }

    /// Deletes hours (sent or not) starting before `before`; returns how many.
    @discardableResult
    public func pruneActivity(before: Int64) throws(StoreError) -> Int {
        try write { database throws(StoreError) in
            // activity_counts rows go with their hour (ON DELETE CASCADE).
            try database.run("DELETE FROM activity_hours WHERE hour_start < ?", before)
            let changes = database.changes
            try database.run("DELETE FROM shared_activity WHERE hour_start < ?", before)
            return changes
        }
    }
}
