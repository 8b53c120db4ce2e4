/// One row of the hit history as the shared store keeps it (docs/two-gateways.md): a
/// gateway's count of one (profile, name, reason, client, source, 5-minute bucket), the
/// whole count each time, so writing it twice counts it once.
public struct HistoryFact: Sendable, Equatable {
    public var profile: String
    public var domain: String
    public var reason: String
    public var client: String
    public var source: String
    public var bucket: Int64
    public var matched: String?
    public var category: String?
    /// 0: gone on the gateway that counted it (folded under its history bound).
    public var count: Int
    public var firstSeen: Int64
    public var lastSeen: Int64
    public var names: Int

    public init(
        profile: String, domain: String, reason: String, client: String, source: String, bucket: Int64,
        matched: String?, category: String?, count: Int, firstSeen: Int64, lastSeen: Int64, names: Int
    ) {
        self.profile = profile
        self.domain = domain
        self.reason = reason
        self.client = client
        self.source = source
        self.bucket = bucket
        self.matched = matched
        self.category = category
        self.count = count
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.names = names
    }
}

/// One count of a profile's hour as the shared store keeps it: `queries` (name empty), or
/// blocks by `reason` or `category`, or rewrites by `engine`.
public struct ActivityFact: Sendable, Equatable, Hashable {
    public var profile: String
    public var hourStart: Int64
    public var kind: String
    public var name: String
    public var count: Int

    public init(profile: String, hourStart: Int64, kind: String, name: String, count: Int) {
        self.profile = profile
        self.hourStart = hourStart
        self.kind = kind
        self.name = name
        self.count = count
    }
}

/// An hour of this gateway's activity the shared store does not have as it is: its facts,
/// and which change of the hour they are.
public struct UnsharedHour: Sendable, Equatable {
    public var profile: String
    public var hourStart: Int64
    public var changes: Int
    public var facts: [ActivityFact]
}

/// The hit history and hourly counts between this gateway's store and the shared one: what
/// is to be written there, and the other gateways' rows as read from there, which the
/// page's day (`hours`, `blockTotals`, `history`) adds to this gateway's own.
extension Store {
    static let historyFactColumns =
        "profile, domain, reason, client, source, bucket, matched, category, count, first_seen, last_seen, names"

    static func historyFact(_ row: Row, from column: Int32 = 0) -> HistoryFact {
        HistoryFact(
            profile: row.text(column), domain: row.text(column + 1), reason: row.text(column + 2),
            client: row.text(column + 3), source: row.text(column + 4), bucket: row.int64(column + 5),
            matched: row.optionalText(column + 6), category: row.optionalText(column + 7), count: row.int(column + 8),
            firstSeen: row.int64(column + 9), lastSeen: row.int64(column + 10), names: row.int(column + 11))
    }

    /// History rows counted here since they were last written to the shared store, oldest
    /// first, and rows it has that are gone here (as facts of count 0).
    public func unsharedHistory(limit: Int) throws(StoreError) -> [HistoryFact] {
        try withDatabase { database throws(StoreError) in
            var facts = try database.rows(
                """
                SELECT \(Self.historyFactColumns) FROM hit_history WHERE shared_count IS NOT count
                ORDER BY last_seen LIMIT ?
                """, limit
            ) { row in Self.historyFact(row) }
            facts += try database.rows(
                """
                SELECT profile, domain, reason, client, source, bucket, last_seen FROM hit_history_gone
                ORDER BY last_seen LIMIT ?
                """, limit
            ) { row in
                HistoryFact(
                    profile: row.text(0), domain: row.text(1), reason: row.text(2), client: row.text(3),
                    source: row.text(4), bucket: row.int64(5), matched: nil, category: nil, count: 0,
                    firstSeen: row.int64(6), lastSeen: row.int64(6), names: 0)
            }
            return facts
        }
    }

    /// The shared store has `facts` as they are: each row marked with the count written
    /// (a row counted again meanwhile stays to be written), each gone row forgotten.
    public func markHistoryShared(_ facts: [HistoryFact]) throws(StoreError) {
        try write { database throws(StoreError) in
            for fact in facts {
                let key: [any SQLBindable] = [
                    fact.profile, fact.domain, fact.reason, fact.client, fact.source, fact.bucket,
                ]
                if fact.count == 0 {
                    try database.run(
                        """
                        DELETE FROM hit_history_gone WHERE profile = ? AND domain = ? AND reason = ? AND client = ?
                            AND source = ? AND bucket = ?
                        """, key[0], key[1], key[2], key[3], key[4], key[5])
                } else {
                    try database.run(
                        """
                        UPDATE hit_history SET shared_count = ?1 WHERE profile = ?2 AND domain = ?3 AND reason = ?4
                            AND client = ?5 AND source = ?6 AND bucket = ?7 AND count = ?1
                        """, fact.count, key[0], key[1], key[2], key[3], key[4], key[5])
                }
            }
        }
    }

    /// Hours counted here since they were last written to the shared store, oldest first,
    /// each with all its counts.
    public func unsharedHours(limit: Int) throws(StoreError) -> [UnsharedHour] {
        try withDatabase { database throws(StoreError) in
            var hours = try database.rows(
                """
                SELECT profile, hour_start, changes, queries FROM activity_hours WHERE changes != shared_changes
                ORDER BY hour_start LIMIT ?
                """, limit
            ) { row in
                UnsharedHour(
                    profile: row.text(0), hourStart: row.int64(1), changes: row.int(2),
                    facts: [
                        ActivityFact(
                            profile: row.text(0), hourStart: row.int64(1), kind: "queries", name: "", count: row.int(3))
                    ])
            }
            for index in hours.indices {
                let hour = hours[index]
                hours[index].facts += try database.rows(
                    "SELECT kind, name, count FROM activity_counts WHERE profile = ? AND hour_start = ?", hour.profile,
                    hour.hourStart
                ) { row in
                    ActivityFact(
                        profile: hour.profile, hourStart: hour.hourStart, kind: row.text(0), name: row.text(1),
                        count: row.int(2))
                }
            }
            return hours
        }
    }

    /// The shared store has `hours` as they were read (an hour counted again meanwhile
    /// stays to be written).
    public func markHoursShared(_ hours: [UnsharedHour]) throws(StoreError) {
        try write { database throws(StoreError) in
            for hour in hours {
                try database.run(
                    """
                    UPDATE activity_hours SET shared_changes = ?1
                    WHERE profile = ?2 AND hour_start = ?3 AND shared_changes < ?1
                    """, hour.changes, hour.profile, hour.hourStart)
            }
        }
    }

    /// How far the other gateways' history has been read from the shared store.
    public func sharedHistoryMark() throws(StoreError) -> Int64 {
        try withDatabase { database throws(StoreError) in
            Int64(try database.integer("SELECT history_pulled FROM shared_state WHERE id = 1"))
        }
    }

    /// Takes the other gateways' rows (history, hours, devices seen) as the shared store has
    /// them (each replaces what was read of it before; a gone row goes) and moves the read
    /// mark to `pulled`.
    public func mergeSharedHistory(
        history: [(gateway: String, fact: HistoryFact)], activity: [(gateway: String, fact: ActivityFact)],
        sightings: [(gateway: String, sighting: ClientSighting)] = [], pulled: Int64
    ) throws(StoreError) {
        try write { database throws(StoreError) in
            for (gateway, sighting) in sightings {
                try database.run(
                    """
                    INSERT OR REPLACE INTO shared_sightings (gateway, profile, client, address, mac, first_seen,
                        last_seen, queries)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """, gateway, sighting.profile, sighting.client, sighting.address, sighting.mac,
                    sighting.firstSeen, sighting.lastSeen, sighting.queries)
            }
            for (gateway, fact) in history {
                if fact.count == 0 {
                    try database.run(
                        """
                        DELETE FROM shared_hit_history WHERE gateway = ? AND profile = ? AND domain = ? AND reason = ?
                            AND client = ? AND source = ? AND bucket = ?
                        """, gateway, fact.profile, fact.domain, fact.reason, fact.client, fact.source, fact.bucket)
                    continue
                }
                try database.run(
                    """
                    INSERT OR REPLACE INTO shared_hit_history (gateway, \(Self.historyFactColumns))
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, gateway, fact.profile, fact.domain, fact.reason, fact.client, fact.source, fact.bucket,
                    fact.matched, fact.category, fact.count, fact.firstSeen, fact.lastSeen, fact.names)
            }
            for (gateway, fact) in activity {
                try database.run(
                    """
                    INSERT OR REPLACE INTO shared_activity (gateway, profile, hour_start, kind, name, count)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """, gateway, fact.profile, fact.hourStart, fact.kind, fact.name, fact.count)
            }
            try database.run(
                """
                INSERT INTO shared_state (id, history_pulled) VALUES (1, ?)
                ON CONFLICT (id) DO UPDATE SET history_pulled = max(history_pulled, excluded.history_pulled)
                """, pulled)
        }
    }
}
