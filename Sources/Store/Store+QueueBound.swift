/// The bound on the hit queue (`hit_queue_max`, docs/sync.md#hits): beyond it the oldest queued
/// rows are merged per (profile, domain, reason) with client `*`. No count is ever lost —
/// only the per-client detail of old rows — and the number of rows folded away is kept
/// per profile and reported once as `merged_events`.
extension Store {
    /// Called inside `enqueue`'s transaction, after the new rows are in. Returns the
    /// number of rows folded away (0 when the queue is within `maxRows`).
    ///
    /// Queued rows are walked oldest first (by first_seen); the walk stops as soon as
    /// merging what it has seen per (profile, domain, reason) brings the queue down to the
    /// bound. Only keys seen twice or more in that prefix are merged (a lone row keeps its
    /// client). When even merging every queued row is not enough — all keys distinct —
    /// the queue stays above the bound: rows are merged, never dropped. Batched rows are
    /// frozen and never merged.
    static func applyQueueBound(maxRows: Int, _ database: Database) throws(StoreError) -> Int {
        let excess = try database.integer("SELECT count(*) FROM hit_queue") - max(0, maxRows)
        guard excess > 0 else { return 0 }

        struct Key: Hashable { let profile: String, domain: String, reason: String }
        var groups: [Key: [(id: Int64, row: HitRow)]] = [:]
        var order: [Key] = []
        var foldable = 0
        try database.forEach(
            """
            SELECT id, \(HitRow.columns) FROM hit_queue WHERE batch_id IS NULL ORDER BY first_seen, id
            """
        ) { row throws(StoreError) in
            let hit = HitRow(row: row, from: 1)
            let key = Key(profile: hit.profile, domain: hit.domain, reason: hit.reason)
            if groups[key] == nil { order.append(key) } else { foldable += 1 }
            groups[key, default: []].append((id: row.int64(0), row: hit))
            return foldable < excess
        }

        var folded: [String: Int] = [:]
        for key in order {
            guard let members = groups[key], members.count > 1 else { continue }
            let before = try queuedRows(profile: key.profile, database)
            for member in members {
                try database.run("DELETE FROM hit_queue WHERE id = ?", member.id)
            }
            // Into the queue like any new row: it may also absorb a `*` row of the same
            // key left by an earlier merge, which the before/after count then includes.
            try upsertQueued(merged(members.map(\.row)), database)
            folded[key.profile, default: 0] += before - (try queuedRows(profile: key.profile, database))
        }
        for (profile, count) in folded where count > 0 {
            try database.run(
                """
                INSERT INTO hit_merge_pending (profile, merged_pending) VALUES (?, ?)
                ON CONFLICT (profile) DO UPDATE SET merged_pending = merged_pending + excluded.merged_pending
                """, profile, count)
        }
        return folded.values.reduce(0, +)
    }

    /// One `*` row standing for `rows` (same profile, domain and reason): counts summed,
    /// the span widened, and the rest (matched, category, source, policy version) from the
    /// newest row, as the upsert does.
    private static func merged(_ rows: [HitRow]) -> HitRow {
        let newest = rows.max { ($0.lastSeen, $0.firstSeen) < ($1.lastSeen, $1.firstSeen) } ?? rows[0]
        var result = newest
        result.client = HitRow.mergedClient
        result.count = rows.reduce(0) { $0 + $1.count }
        result.firstSeen = rows.map(\.firstSeen).min() ?? newest.firstSeen
        result.lastSeen = rows.map(\.lastSeen).max() ?? newest.lastSeen
        return result
    }

    private static func queuedRows(profile: String, _ database: Database) throws(StoreError) -> Int {
        try database.integer("SELECT count(*) FROM hit_queue WHERE profile = ? AND batch_id IS NULL", profile)
    }
}
