/// Forming a new batch from the oldest queued rows of a profile (docs/sync.md#hits).
extension Store {
    /// Room a `blocked_attempt` report needs besides its events: `report_type`,
    /// `reported_at`, `batch_id`, `policy_version`, the window and `merged_events`.
    static let reportEnvelopeBytes = 512

    /// Called inside `nextBatch`'s transaction when the profile has no batch in flight.
    static func formBatch(
        profile: String, maxEvents: Int, maxBytes: Int, now: Int64,
        _ database: Database
    ) throws(StoreError) -> Batch? {
        // One policy version per batch, the oldest row's: the report carries one
        // `policy_version`, and a policy change in the middle of the queue must not
        // relabel the hits blocked under the previous version.
        guard
            let version = try database.firstRow(
                """
                SELECT policy_version FROM hit_queue WHERE profile = ? AND batch_id IS NULL
                ORDER BY first_seen, id LIMIT 1
                """, profile, make: { $0.int(0) })
        else { return nil }

        var ids: [Int64] = []
        var events: [HitRow] = []
        var bytes = reportEnvelopeBytes
        try database.forEach(
            """
            SELECT id, \(HitRow.columns) FROM hit_queue
            WHERE profile = ? AND batch_id IS NULL AND policy_version = ?
            ORDER BY first_seen, id LIMIT ?
            """, profile, version, max(1, maxEvents)
        ) { row throws(StoreError) in
            let event = HitRow(row: row, from: 1)
            // The first event always goes, so one oversized row cannot stall the queue.
            guard events.isEmpty || bytes + event.estimatedJSONBytes <= maxBytes else { return false }
            bytes += event.estimatedJSONBytes
            ids.append(row.int64(0))
            events.append(event)
            return true
        }

        let id = BatchID.random()
        let merged = try database.integer("SELECT merged_pending FROM hit_merge_pending WHERE profile = ?", profile)
        try database.run(
            """
            INSERT INTO hit_batches (id, profile, merged_events, policy_version, created_at) VALUES (?, ?, ?, ?, ?)
            """, id, profile, merged, version, now)
        try database.run("DELETE FROM hit_merge_pending WHERE profile = ?", profile)
        for rowID in ids {
            try database.run("UPDATE hit_queue SET batch_id = ? WHERE id = ?", id, rowID)
        }
        return Batch(id: id, profile: profile, rows: events, mergedEvents: merged, policyVersion: version)
    }
}

/// Batch identifiers: random (version 4) UUIDs in lowercase text form.
enum BatchID {
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
