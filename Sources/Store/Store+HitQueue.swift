/// The durable hit queue and its batches (docs/sync.md#hits).
///
/// A row is queued (`batch_id` NULL) until `nextBatch` assigns it to the profile's one
/// batch in flight; from then on it is frozen and leaves the queue only by `completeBatch`
/// (a 202: deleted) or `deadLetter` (a 400: moved). Delivery is therefore at least once,
/// with a stable `batch_id` for the receiver to drop duplicates.
extension Store {
    /// Adds aggregated hits in one transaction. A queued row with the same (profile,
    /// domain, reason, client, source) absorbs a new one: counts add up, the time span
    /// widens, and `matched`, `category` and `policyVersion` come from the newer of the
    /// two. Batched rows are never touched. Then the queue bound applies (`maxRows`, all
    /// profiles together); returns the number of rows it folded away (0 within the bound).
    /// `rows` may be lazy: each is made as it is stored, so a big flush never holds them all.
    @discardableResult
    public func enqueue(_ rows: some Sequence<HitRow>, maxRows: Int) throws(StoreError) -> Int {
        try write { database throws(StoreError) in
            for row in rows { try Self.upsertQueued(row, database) }
            return try Self.applyQueueBound(maxRows: maxRows, database)
        }
    }

    /// The profile's batch in flight, or a new one; nil when nothing is queued.
    ///
    /// An unacknowledged batch is returned exactly as formed (same id, rows and merged
    /// count). Otherwise the oldest queued rows — all of the oldest row's policy version,
    /// at most `maxEvents`, and no more than fit `maxBytes` of report JSON (at least one)
    /// — become a batch with a fresh UUID, together with the profile's pending merged
    /// count, in one transaction. Rows queued later are never added to it.
    public func nextBatch(
        profile: String, maxEvents: Int = 500, maxBytes: Int = 262_144, now: Int64
    ) throws(StoreError) -> Batch? {
        try write { database throws(StoreError) in
            if let open = try database.firstRow(
                "SELECT id, merged_events, policy_version FROM hit_batches WHERE profile = ?", profile,
                make: { row in (id: row.text(0), merged: row.int(1), version: row.int(2)) })
            {
                let events = try database.rows(
                    "SELECT \(HitRow.columns) FROM hit_queue WHERE batch_id = ? ORDER BY first_seen, id", open.id
                ) { HitRow(row: $0) }
                return Batch(
                    id: open.id, profile: profile, rows: events, mergedEvents: open.merged, policyVersion: open.version)
            }
            return try Self.formBatch(profile: profile, maxEvents: maxEvents, maxBytes: maxBytes, now: now, database)
        }
    }

    /// The API accepted the batch (202): its rows are deleted. Returns how many; 0 for an
    /// unknown id (a batch already completed), which is not an error.
    @discardableResult
    public func completeBatch(id: String) throws(StoreError) -> Int {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM hit_queue WHERE batch_id = ?", id)
            let deleted = database.changes
            try database.run("DELETE FROM hit_batches WHERE id = ?", id)
            return deleted
        }
    }

    /// The API refused the batch (400): its rows move to the dead-letter table with
    /// `reason` and `now`, so the queue moves on and `status` can show them. Returns the
    /// number of rows moved; 0 for an unknown id.
    @discardableResult
    public func deadLetter(batchID: String, reason: String, now: Int64) throws(StoreError) -> Int {
        try write { database throws(StoreError) in
            try database.run(
                """
                INSERT INTO dead_letter_batches (id, profile, merged_events, policy_version, error, dead_at)
                SELECT id, profile, merged_events, policy_version, ?, ? FROM hit_batches WHERE id = ?
                """, reason, now, batchID)
            guard database.changes > 0 else { return 0 }
            try database.run(
                """
                INSERT INTO dead_letter (batch_id, \(HitRow.columns))
                SELECT batch_id, \(HitRow.columns) FROM hit_queue WHERE batch_id = ? ORDER BY first_seen, id
                """, batchID)
            let moved = database.changes
            try database.run("DELETE FROM hit_queue WHERE batch_id = ?", batchID)
            try database.run("DELETE FROM hit_batches WHERE id = ?", batchID)
            return moved
        }
    }

    /// Rows of the profile: queued, in its batch in flight, dead-lettered; and rows folded
    /// away by the bound that no batch has reported yet.
    public func queueCounts(
        profile: String
    ) throws(StoreError) -> (queued: Int, batched: Int, deadLettered: Int, mergedPending: Int) {
        try withDatabase { database throws(StoreError) in
            try database.firstRow(
                """
                SELECT (SELECT count(*) FROM hit_queue WHERE profile = ?1 AND batch_id IS NULL),
                       (SELECT count(*) FROM hit_queue WHERE profile = ?1 AND batch_id IS NOT NULL),
                       (SELECT count(*) FROM dead_letter WHERE profile = ?1),
                       coalesce((SELECT merged_pending FROM hit_merge_pending WHERE profile = ?1), 0)
                """, profile
            ) { row in
                (queued: row.int(0), batched: row.int(1), deadLettered: row.int(2), mergedPending: row.int(3))
            } ?? (queued: 0, batched: 0, deadLettered: 0, mergedPending: 0)
        }
    }

    /// Profiles with rows queued or in flight, by name: whom the reporter has work for.
    public func profilesWithQueuedHits() throws(StoreError) -> [String] {
        try withDatabase { database throws(StoreError) in
            try database.rows("SELECT DISTINCT profile FROM hit_queue ORDER BY profile") { $0.text(0) }
        }
    }

    /// Deletes dead-lettered batches (and their rows) moved there before `before`.
    @discardableResult
    public func pruneDeadLetter(before: Int64) throws(StoreError) -> Int {
        try write { database throws(StoreError) in
            try database.run(
                "DELETE FROM dead_letter WHERE batch_id IN (SELECT id FROM dead_letter_batches WHERE dead_at < ?)",
                before)
            let deleted = database.changes
            try database.run("DELETE FROM dead_letter_batches WHERE dead_at < ?", before)
            return deleted
        }
    }

    /// Inserts a queued row or folds it into the queued row with the same key.
    static func upsertQueued(_ row: HitRow, _ database: Database) throws(StoreError) {
        // Every right-hand side sees the row as it was before the update, so `last_seen`
        // in the CASEs is the old one.
        try database.run(
            """
            INSERT INTO hit_queue (\(HitRow.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (profile, domain, reason, client, source) WHERE batch_id IS NULL DO UPDATE SET
                count = count + excluded.count,
                names = names + excluded.names,
                matched = CASE WHEN excluded.last_seen >= last_seen THEN excluded.matched ELSE matched END,
                category = CASE WHEN excluded.last_seen >= last_seen THEN excluded.category ELSE category END,
                policy_version = CASE WHEN excluded.last_seen >= last_seen THEN excluded.policy_version ELSE policy_version END,
                first_seen = min(first_seen, excluded.first_seen),
                last_seen = max(last_seen, excluded.last_seen)
            """, row.profile, row.domain, row.matched, row.reason, row.category, row.client, row.source,
            row.count, row.firstSeen, row.lastSeen, row.policyVersion, row.names)
    }
}

extension Batch {
    /// A batch of stored rows; the window spans them.
    init(id: String, profile: String, rows: [HitRow], mergedEvents: Int, policyVersion: Int) {
        self.init(
            id: id, profile: profile, events: rows, mergedEvents: mergedEvents,
            windowStart: rows.map(\.firstSeen).min() ?? 0, windowEnd: rows.map(\.lastSeen).max() ?? 0,
            policyVersion: policyVersion)
    }
}
