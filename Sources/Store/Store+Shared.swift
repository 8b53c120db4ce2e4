/// The local half of the shared store (docs/two-gateways.md): which overrides and devices
/// the shared store does not have as they are here yet, what came from it, how far it has
/// been read, and how the connection stands. This store stays the one every part of the
/// gateway reads; the shared store's changes are merged into it.
public struct SharedStateRow: Sendable, Equatable {
    /// The shared store's last change read (its sequence number).
    public var pulled: Int64
    public var connected: Bool
    /// Since when connected, or unreachable (Unix seconds); 0 before the first try.
    public var since: Int64
    /// Why it is unreachable.
    public var error: String?

    public init(pulled: Int64, connected: Bool, since: Int64, error: String?) {
        self.pulled = pulled
        self.connected = connected
        self.since = since
        self.error = error
    }
}

extension Store {
    /// Overrides the shared store does not have as they are here (made or removed here
    /// since), oldest first.
    public func unsharedOverrides(limit: Int) throws(StoreError) -> [OverrideRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                "SELECT \(Self.overrideColumns) FROM overrides WHERE shared = 0 ORDER BY id LIMIT ?", limit,
                make: Self.override)
        }
    }

    /// The shared store has `row` under `uid`: marked so, unless it was removed here
    /// meanwhile (that removal is still to be written).
    public func markOverrideShared(_ row: OverrideRow, uid: String) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                "UPDATE overrides SET shared = 1, uid = ? WHERE id = ? AND removed_at IS ?", uid, row.id, row.removedAt)
        }
    }

    /// Devices named or assigned here that the shared store does not have as they are.
    public func unsharedDevices() throws(StoreError) -> [DeviceRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                "SELECT mac, name, profile, changed_at, changed_by FROM devices WHERE shared = 0 ORDER BY mac",
                make: Self.device)
        }
    }

    /// The shared store has the device as `row` has it: marked so, unless it changed here
    /// meanwhile.
    public func markDeviceShared(_ row: DeviceRow) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                """
                UPDATE devices SET shared = 1
                WHERE mac = ? AND changed_at = ? AND name IS ? AND profile IS ? AND changed_by = ?
                """, row.mac, row.changedAt, row.name, row.profile, row.changedBy)
        }
    }

    /// Requests asked or answered here that the shared store does not have as they are,
    /// oldest first; each with the shared identity of the override its answer made, when
    /// that override came from the shared store (one made here is `GATEWAY:ID`).
    public func unsharedRequests(limit: Int) throws(StoreError) -> [(request: RequestRow, overrideUID: String?)] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT \(Self.requestColumns), (SELECT uid FROM overrides WHERE overrides.id = requests.override_id)
                FROM requests WHERE shared = 0 ORDER BY id LIMIT ?
                """, limit
            ) { row in
                (Self.request(row), row.optionalText(15))
            }
        }
    }

    /// The shared store has `row` under `uid`: marked so, unless it was answered here
    /// meanwhile.
    public func markRequestShared(_ row: RequestRow, uid: String) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                "UPDATE requests SET shared = 1, uid = ? WHERE id = ? AND answer IS ?", uid, row.id, row.answer)
        }
    }

    /// How many changes wait for the shared store.
    public func unsharedCount() throws(StoreError) -> Int {
        try withDatabase { database throws(StoreError) in
            try database.integer(
                """
                SELECT (SELECT count(*) FROM overrides WHERE shared = 0) + (SELECT count(*) FROM devices WHERE shared = 0)
                    + (SELECT count(*) FROM requests WHERE shared = 0)
                """)
        }
    }

    /// Merges what the shared store holds (other gateways' changes, and this one's read
    /// back) and moves the read mark to `pulled`, in one transaction. An override is
    /// known by its `uid`: a new one is added (already reported to the API by the gateway
    /// that made it); a removal is taken when this copy is not removed yet. A device is
    /// taken when it changed later than this copy, or this copy is already shared; a
    /// change made here and not yet written stays, for the shared store to weigh. Returns
    /// whether anything changed here.
    public func mergeShared(
        overrides: [OverrideRow], devices: [DeviceRow], requests: [(request: RequestRow, overrideUID: String?)] = [],
        pulled: Int64
    ) throws(StoreError) -> Bool {
        try write { database throws(StoreError) in
            var changed = false
            for row in overrides {
                guard let uid = row.uid else { continue }
                let local = try database.firstRow(
                    "SELECT \(Self.overrideColumns) FROM overrides WHERE uid = ?", uid, make: Self.override)
                guard let local else {
                    try database.run(
                        """
                        INSERT INTO overrides (profile, kind, target, minutes, day, starts_at, ends_at, set_by,
                            removed_at, removed_by, uid, reported, shared)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 1)
                        """, row.profile, row.kind, row.target, row.minutes, row.day, row.startsAt, row.endsAt,
                        row.setBy, row.removedAt, row.removedBy, uid)
                    changed = true
                    continue
                }
                guard local.removedAt == nil, let removedAt = row.removedAt else { continue }
                try database.run(
                    "UPDATE overrides SET removed_at = ?, removed_by = ?, reported = 1, shared = 1 WHERE id = ?",
                    removedAt, row.removedBy, local.id)
                changed = true
            }
            for row in devices {
                let local = try database.firstRow(
                    "SELECT mac, name, profile, changed_at, changed_by, shared FROM devices WHERE mac = ?", row.mac
                ) { (device: Self.device($0), shared: $0.int(5) == 1) }
                if let local {
                    guard local.shared || row.changedAt > local.device.changedAt else { continue }
                    guard local.device != row else { continue }
                }
                try database.run(
                    """
                    INSERT INTO devices (mac, name, profile, changed_at, changed_by, shared, reported_profile)
                    VALUES (?1, ?2, ?3, ?4, ?5, 1, ?3)
                    ON CONFLICT (mac) DO UPDATE SET name = excluded.name, profile = excluded.profile,
                        changed_at = excluded.changed_at, changed_by = excluded.changed_by, shared = 1,
                        report_to = NULL, report_from = NULL, reported_profile = excluded.profile
                    """, row.mac, row.name, row.profile, row.changedAt, row.changedBy)
                changed = true
            }
            // After the overrides: an answer's override is here by now.
            for (row, overrideUID) in requests {
                guard let uid = row.uid else { continue }
                let overrideID = try overrideUID.flatMap { overrideUID throws(StoreError) in
                    try database.firstRow("SELECT id FROM overrides WHERE uid = ?", overrideUID) { $0.int64(0) }
                }
                let local = try database.firstRow(
                    "SELECT answer, shared FROM requests WHERE uid = ?", uid
                ) { (answer: $0.optionalText(0), shared: $0.int(1) == 1) }
                guard let local else {
                    try database.run(
                        """
                        INSERT INTO requests (profile, device, address, kind, target, note, asked_at, expires_at, answer,
                            minutes, answered_at, answered_by, override_id, uid, shared)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
                        """, row.profile, row.device, row.address, row.kind, row.target, row.note, row.askedAt,
                        row.expiresAt, row.answer, row.minutes, row.answeredAt, row.answeredBy, overrideID, uid)
                    changed = true
                    continue
                }
                // An answer given here and not yet written stays, for the shared store to weigh.
                guard row.answer != nil, local.answer == nil || (local.shared && local.answer != row.answer) else {
                    continue
                }
                try database.run(
                    """
                    UPDATE requests SET answer = ?, minutes = ?, answered_at = ?, answered_by = ?, override_id = ?,
                        shared = 1
                    WHERE uid = ?
                    """, row.answer, row.minutes, row.answeredAt, row.answeredBy, overrideID, uid)
                changed = true
            }
            try database.run(
                "INSERT INTO shared_state (id, pulled) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET pulled = max(pulled, excluded.pulled)",
                pulled)
            return changed
        }
    }

    /// Forgets what the shared store had: every override, device, request, history row,
    /// hour, page session and the password is to be written again and every change read again (the shared store is another database:
    /// a new one, or one restored from a backup).
    public func forgetShared() throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run("UPDATE overrides SET shared = 0")
            try database.run("UPDATE devices SET shared = 0")
            try database.run("UPDATE requests SET shared = 0")
            try database.run(
                "UPDATE shared_state SET pulled = 0, history_pulled = 0, page_pulled = 0, web_password = NULL")
            try database.run("UPDATE web_sessions SET shared = 0")
            try database.run("DELETE FROM web_sessions_ended")
            try database.run("UPDATE hit_history SET shared_count = NULL")
            try database.run("UPDATE activity_hours SET shared_changes = 0")
            try database.run("DELETE FROM hit_history_gone")
            try database.run("DELETE FROM shared_hit_history")
            try database.run("DELETE FROM shared_activity")
            try database.run("UPDATE client_sightings SET shared_queries = NULL")
            try database.run("DELETE FROM shared_sightings")
        }
    }

    /// The read mark and the connection's state; nil before the shared store was first used.
    public func sharedState() throws(StoreError) -> SharedStateRow? {
        try withDatabase { database throws(StoreError) in
            try database.firstRow("SELECT pulled, connected, since, error FROM shared_state WHERE id = 1") { row in
                SharedStateRow(
                    pulled: row.int64(0), connected: row.int(1) == 1, since: row.int64(2), error: row.optionalText(3))
            }
        }
    }

    /// Records that the connection came or went (`error` says why it went).
    public func setSharedConnection(connected: Bool, since: Int64, error: String?) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                """
                INSERT INTO shared_state (id, connected, since, error) VALUES (1, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET connected = excluded.connected, since = excluded.since,
                    error = excluded.error
                """, connected, since, error)
        }
    }

    static func device(_ row: Row) -> DeviceRow {
        DeviceRow(
            mac: row.text(0), name: row.optionalText(1), profile: row.optionalText(2), changedAt: row.int64(3),
            changedBy: row.text(4))
    }
}
