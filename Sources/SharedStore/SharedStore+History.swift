import Store

/// Each gateway's hit history, hourly counts and devices seen in the shared store
/// (docs/two-gateways.md#what-is-shared), so the page of every gateway shows the child's
/// whole day. Rows are a gateway's whole counts, so a row written twice counts once; they
/// are read by their `changes` number past a mark of their own, apart from the parent's
/// changes, so a day's history can be read in batches.
extension SharedStore {
    /// Rows written or read in one transaction at most; more wait for the next round.
    public static let historyBatch = 2_000

    /// Writes the history rows, hours and devices seen counted here since they were last
    /// written; returns how many, and whether more wait.
    @discardableResult
    public func pushHistory(from store: Store) throws(SharedStoreError) -> (written: Int, more: Bool) {
        let facts: [HistoryFact]
        let hours: [UnsharedHour]
        let sightings: [ClientSighting]
        do {
            facts = try store.unsharedHistory(limit: Self.historyBatch)
            hours = try store.unsharedHours(limit: Self.historyBatch / 20)
            sightings = try store.unsharedSightings(limit: Self.historyBatch)
        } catch {
            throw .local("\(error)")
        }
        guard !facts.isEmpty || !hours.isEmpty || !sightings.isEmpty else { return (0, false) }
        try transaction { () throws(SharedStoreError) in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [Self.changesLockKey])
            try upsert(
                table: "hit_history",
                columns: [
                    "profile", "domain", "reason", "client", "source", "bucket", "matched", "category", "count",
                    "first_seen", "last_seen", "names",
                ], key: ["profile", "domain", "reason", "client", "source", "bucket"],
                rows: facts.filter { $0.count > 0 }.map {
                    [
                        $0.profile, $0.domain, $0.reason, $0.client, $0.source, "\($0.bucket)", $0.matched, $0.category,
                        "\($0.count)", "\($0.firstSeen)", "\($0.lastSeen)", "\($0.names)",
                    ]
                })
            // Gone here: the row this gateway wrote, if it wrote one, counts nothing now.
            for fact in facts where fact.count == 0 {
                try connection.execute(
                    """
                    UPDATE hit_history SET count = 0, seq = nextval('changes')
                    WHERE gateway = $1 AND profile = $2 AND domain = $3 AND reason = $4 AND client = $5 AND source = $6
                        AND bucket = $7 AND count <> 0
                    """,
                    [gateway, fact.profile, fact.domain, fact.reason, fact.client, fact.source, "\(fact.bucket)"])
            }
            try upsert(
                table: "activity", columns: ["profile", "hour_start", "kind", "name", "count"],
                key: ["profile", "hour_start", "kind", "name"],
                rows: hours.flatMap(\.facts).map { [$0.profile, "\($0.hourStart)", $0.kind, $0.name, "\($0.count)"] })
            try upsert(
                table: "sightings",
                columns: ["profile", "client", "address", "mac", "first_seen", "last_seen", "queries"],
                key: ["profile", "client"],
                rows: sightings.map {
                    [
                        $0.profile, $0.client, $0.address, $0.mac, "\($0.firstSeen)", "\($0.lastSeen)",
                        "\($0.queries)",
                    ]
                })
            try connection.execute("SELECT pg_notify($1, $2)", [Self.channel, gateway])
        }
        do {
            try store.markHistoryShared(facts)
            try store.markHoursShared(hours)
            try store.markSightingsShared(sightings)
        } catch {
            throw .local("\(error)")
        }
        let more =
            facts.count >= Self.historyBatch || hours.count >= Self.historyBatch / 20
            || sightings.count >= Self.historyBatch
        return (facts.count + hours.count + sightings.count, more)
    }

    /// `rows` into `table` with this gateway and the next `changes` numbers, replacing the
    /// row of the same `key`: statements of at most 200 rows.
    private func upsert(table: String, columns: [String], key: [String], rows: [[String?]]) throws(SharedStoreError) {
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(start + 200, rows.count)]
            var parameters: [String?] = [gateway]
            var values: [String] = []
            for row in chunk {
                let base = parameters.count + 1
                values.append(
                    "($1, " + (0..<columns.count).map { "$\(base + $0)" }.joined(separator: ", ")
                        + ", nextval('changes'))")
                parameters += row
            }
            let updates = columns.filter { !key.contains($0) }.map { "\($0) = excluded.\($0)" }
            try connection.execute(
                """
                INSERT INTO \(table) (gateway, \(columns.joined(separator: ", ")), seq)
                VALUES \(values.joined(separator: ", "))
                ON CONFLICT (gateway, \(key.joined(separator: ", "))) DO UPDATE SET
                    \(updates.joined(separator: ", ")), seq = excluded.seq
                """, parameters)
            start += chunk.count
        }
    }

    /// Reads the other gateways' rows (history, hours, devices seen) numbered past this
    /// store's history mark, in one snapshot, at most a batch of each; returns how many,
    /// and whether more wait.
    @discardableResult
    public func pullHistory(into store: Store) throws(SharedStoreError) -> (read: Int, more: Bool) {
        let mark: Int64
        do { mark = try store.sharedHistoryMark() } catch { throw .local("\(error)") }
        var history: [(gateway: String, fact: HistoryFact, seq: Int64)] = []
        var activity: [(gateway: String, fact: ActivityFact, seq: Int64)] = []
        var sightings: [(gateway: String, sighting: ClientSighting, seq: Int64)] = []
        let parameters = ["\(mark)", gateway, "\(Self.historyBatch)"]
        try transaction(isolation: "REPEATABLE READ") { () throws(SharedStoreError) in
            for row in try connection.execute(
                """
                SELECT gateway, profile, domain, reason, client, source, bucket, matched, category, count, first_seen,
                    last_seen, names, seq
                FROM hit_history WHERE seq > $1 AND gateway <> $2 ORDER BY seq LIMIT $3
                """, parameters)
            {
                guard let gateway = row[0], let profile = row[1], let domain = row[2], let reason = row[3],
                    let client = row[4], let source = row[5], let bucket = row[6].flatMap({ Int64($0) }),
                    let count = row[9].flatMap({ Int($0) }), let first = row[10].flatMap({ Int64($0) }),
                    let last = row[11].flatMap({ Int64($0) }), let names = row[12].flatMap({ Int($0) }),
                    let seq = row[13].flatMap({ Int64($0) })
                else { throw .malformed("hit_history", row.first.flatMap { $0 } ?? "?") }
                let fact = HistoryFact(
                    profile: profile, domain: domain, reason: reason, client: client, source: source, bucket: bucket,
                    matched: row[7], category: row[8], count: count, firstSeen: first, lastSeen: last, names: names)
                history.append((gateway, fact, seq))
            }
            for row in try connection.execute(
                """
                SELECT gateway, profile, hour_start, kind, name, count, seq FROM activity
                WHERE seq > $1 AND gateway <> $2 ORDER BY seq LIMIT $3
                """, parameters)
            {
                guard let gateway = row[0], let profile = row[1], let hour = row[2].flatMap({ Int64($0) }),
                    let kind = row[3], let name = row[4], let count = row[5].flatMap({ Int($0) }),
                    let seq = row[6].flatMap({ Int64($0) })
                else { throw .malformed("activity", row.first.flatMap { $0 } ?? "?") }
                activity.append(
                    (
                        gateway, ActivityFact(profile: profile, hourStart: hour, kind: kind, name: name, count: count),
                        seq
                    ))
            }
            for row in try connection.execute(
                """
                SELECT gateway, profile, client, address, mac, first_seen, last_seen, queries, seq FROM sightings
                WHERE seq > $1 AND gateway <> $2 ORDER BY seq LIMIT $3
                """, parameters)
            {
                guard let gateway = row[0], let profile = row[1], let client = row[2],
                    let first = row[5].flatMap({ Int64($0) }), let last = row[6].flatMap({ Int64($0) }),
                    let queries = row[7].flatMap({ Int($0) }), let seq = row[8].flatMap({ Int64($0) })
                else { throw .malformed("sightings", row.first.flatMap { $0 } ?? "?") }
                let sighting = ClientSighting(
                    profile: profile, client: client, address: row[3], mac: row[4], firstSeen: first, lastSeen: last,
                    queries: queries)
                sightings.append((gateway, sighting, seq))
            }
        }
        // The mark: past everything read, but not past the last row of a full batch, after
        // which that table has rows not read yet; rows past it are read again next time
        // (each replaces itself).
        let lasts = [history.last?.seq, activity.last?.seq, sightings.last?.seq]
        let full = [
            history.count >= Self.historyBatch, activity.count >= Self.historyBatch,
            sightings.count >= Self.historyBatch,
        ]
        var pulled = lasts.compactMap { $0 }.max() ?? mark
        for (last, isFull) in zip(lasts, full) where isFull { pulled = min(pulled, last ?? pulled) }
        guard pulled > mark else { return (0, false) }
        do {
            try store.mergeSharedHistory(
                history: history.filter { $0.seq <= pulled }.map { ($0.gateway, $0.fact) },
                activity: activity.filter { $0.seq <= pulled }.map { ($0.gateway, $0.fact) },
                sightings: sightings.filter { $0.seq <= pulled }.map { ($0.gateway, $0.sighting) }, pulled: pulled)
        } catch {
            throw .local("\(error)")
        }
        return (history.count + activity.count + sightings.count, full.contains(true))
    }

    /// Deletes history and devices last seen, and hours started, before `before` (the
    /// history's retention): every gateway forgets them by itself at the same age.
    public func pruneHistory(before: Int64) throws(SharedStoreError) {
        try connection.execute("DELETE FROM hit_history WHERE last_seen < $1", ["\(before)"])
        try connection.execute("DELETE FROM activity WHERE hour_start < $1", ["\(before)"])
        try connection.execute("DELETE FROM sightings WHERE last_seen < $1", ["\(before)"])
    }
}
