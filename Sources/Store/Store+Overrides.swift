/// A parent's override as stored (docs/parent-page.md#overrides): its kind as a word, and
/// the target and minutes that kind needs. What it means is the `Policy` module's.
public struct OverrideRow: Sendable, Equatable {
    public var id: Int64
    public var profile: String
    /// `pause`, `extension`, `app_bonus` or `exception`.
    public var kind: String
    /// The service of an app bonus, the name of an exception.
    public var target: String?
    /// An app bonus's minutes.
    public var minutes: Int?
    /// An app bonus's local day (days since 1970).
    public var day: Int?
    /// Unix seconds.
    public var startsAt: Int64
    public var endsAt: Int64?
    public var setBy: String
    public var removedAt: Int64?
    public var removedBy: String?
    /// Its identity among gateways that share a store (`GATEWAY:ID` of the one that made
    /// it); nil until the shared store has it, and on a gateway that shares nothing.
    public var uid: String?

    public init(
        id: Int64 = 0, profile: String, kind: String, target: String? = nil, minutes: Int? = nil, day: Int? = nil,
        startsAt: Int64, endsAt: Int64?, setBy: String, removedAt: Int64? = nil, removedBy: String? = nil,
        uid: String? = nil
    ) {
        self.id = id
        self.profile = profile
        self.kind = kind
        self.target = target
        self.minutes = minutes
        self.day = day
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.setBy = setBy
        self.removedAt = removedAt
        self.removedBy = removedBy
        self.uid = uid
    }
}

/// A device as the parent named or assigned it on the page.
public struct DeviceRow: Sendable, Equatable {
    /// `aa:bb:cc:dd:ee:ff`, lower case.
    public var mac: String
    public var name: String?
    /// The profile it is assigned to; nil leaves it to the configuration.
    public var profile: String?
    public var changedAt: Int64
    public var changedBy: String

    public init(mac: String, name: String?, profile: String?, changedAt: Int64, changedBy: String) {
        self.mac = mac
        self.name = name
        self.profile = profile
        self.changedAt = changedAt
        self.changedBy = changedBy
    }
}

extension Store {
    static let overrideColumns =
        "id, profile, kind, target, minutes, day, starts_at, ends_at, set_by, removed_at, removed_by, uid"

    static func override(_ row: Row) -> OverrideRow {
        OverrideRow(
            id: row.int64(0), profile: row.text(1), kind: row.text(2), target: row.optionalText(3),
            minutes: row.isNull(4) ? nil : row.int(4), day: row.isNull(5) ? nil : row.int(5), startsAt: row.int64(6),
            endsAt: row.optionalInt64(7), setBy: row.text(8), removedAt: row.optionalInt64(9),
            removedBy: row.optionalText(10), uid: row.optionalText(11))
    }

    /// Stores a new override (its `id` is ignored) and returns it with the id it got.
    public func addOverride(_ override: OverrideRow) throws(StoreError) -> OverrideRow {
        try write { database throws(StoreError) in
            let id = try database.integer(
                """
                INSERT INTO overrides (profile, kind, target, minutes, day, starts_at, ends_at, set_by)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                """, override.profile, override.kind, override.target, override.minutes, override.day,
                override.startsAt, override.endsAt, override.setBy)
            var stored = override
            stored.id = Int64(id)
            return stored
        }
    }

    /// The overrides not removed and not ended by `now` (unix seconds), oldest first.
    public func liveOverrides(now: Int64) throws(StoreError) -> [OverrideRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT \(Self.overrideColumns) FROM overrides
                WHERE removed_at IS NULL AND (ends_at IS NULL OR ends_at > ?) ORDER BY id
                """, now, make: Self.override)
        }
    }

    /// Removes one live override; nil when there is none with that id (already removed,
    /// ended, or never made), else the row as it was.
    public func removeOverride(id: Int64, now: Int64, by: String) throws(StoreError) -> OverrideRow? {
        try write { database throws(StoreError) in
            let found = try database.firstRow(
                """
                SELECT \(Self.overrideColumns) FROM overrides
                WHERE id = ? AND removed_at IS NULL AND (ends_at IS NULL OR ends_at > ?)
                """, id, now, make: Self.override)
            guard var found else { return nil }
            try database.run(
                "UPDATE overrides SET removed_at = ?, removed_by = ?, reported = 0, shared = 0 WHERE id = ?", now,
                by, id)
            found.removedAt = now
            found.removedBy = by
            return found
        }
    }

    /// Ends every live override of `kind` for `profile` at `now` (a resume ends the
    /// pauses); returns how many.
    @discardableResult
    public func endOverrides(profile: String, kind: String, now: Int64, by: String) throws(StoreError) -> Int {
        try write { database throws(StoreError) in
            try database.run(
                """
                UPDATE overrides SET removed_at = ?, removed_by = ?, reported = 0, shared = 0
                WHERE profile = ? AND kind = ? AND removed_at IS NULL AND (ends_at IS NULL OR ends_at > ?)
                """, now, by, profile, kind, now)
            return database.changes
        }
    }

    /// Overrides set or removed that the API has not been sent yet, oldest first, at most
    /// `limit`; only `profile`'s when given (each profile reports under its own key).
    public func unreportedOverrides(profile: String? = nil, limit: Int) throws(StoreError) -> [OverrideRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT \(Self.overrideColumns) FROM overrides
                WHERE reported = 0 AND (?1 IS NULL OR profile = ?1) ORDER BY id LIMIT ?2
                """, profile, limit, make: Self.override)
        }
    }

    /// Marks overrides as sent to the API, each only as it was sent: a removal stored while
    /// its setting was on the way is news still, and stays unreported.
    public func markOverridesReported(_ rows: [OverrideRow]) throws(StoreError) {
        try write { database throws(StoreError) in
            for row in rows {
                try database.run(
                    "UPDATE overrides SET reported = 1 WHERE id = ? AND removed_at IS ?", row.id, row.removedAt)
            }
        }
    }

    /// Names or assigns a device; a nil field keeps what was stored (an empty name or
    /// profile clears it).
    public func saveDevice(mac: String, name: String?, profile: String?, now: Int64, by: String) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                """
                INSERT INTO devices (mac, name, profile, changed_at, changed_by, report_to)
                VALUES (?1, nullif(?2, ''), nullif(?3, ''), ?4, ?5, nullif(?3, ''))
                ON CONFLICT (mac) DO UPDATE SET
                    name = CASE WHEN ?2 IS NULL THEN name ELSE nullif(?2, '') END,
                    profile = CASE WHEN ?3 IS NULL THEN profile ELSE nullif(?3, '') END,
                    changed_at = excluded.changed_at, changed_by = excluded.changed_by, shared = 0
                """, mac, name, profile, now, by)
            // What the API is to be told: the profile it is with now (of its assignment or
            // new name), and the one it left when that one was told of it.
            try database.run(
                """
                UPDATE devices SET report_to = profile,
                    report_from = CASE WHEN reported_profile IS profile THEN NULL
                        WHEN reported_profile IS NOT NULL THEN reported_profile ELSE report_from END
                WHERE mac = ?
                """, mac)
        }
    }

    /// Every device the parent named or assigned.
    public func devices() throws(StoreError) -> [DeviceRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                "SELECT mac, name, profile, changed_at, changed_by FROM devices ORDER BY mac", make: Self.device)
        }
    }
}

/// A device assignment to be told to the API (docs/sync.md#parent-overrides): the device as
/// it is, for the profile it is with now, or for the profile it left (`left`).
public struct DeviceReport: Sendable, Equatable {
    public var device: DeviceRow
    /// The profile the report goes to.
    public var profile: String
    /// The device left `profile` (assigned elsewhere, or back to the configuration).
    public var left: Bool
}

extension Store {
    /// The device changes the API is still to be told of under `profile`.
    public func unreportedDevices(profile: String) throws(StoreError) -> [DeviceReport] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT mac, name, profile, changed_at, changed_by, report_from = ?1 FROM devices
                WHERE report_to = ?1 OR report_from = ?1 ORDER BY changed_at, mac
                """, profile
            ) { row in DeviceReport(device: Self.device(row), profile: profile, left: row.int(5) == 1) }
        }
    }

    /// The API has `report` (or refused it for good): not sent again, unless the device
    /// changed meanwhile.
    public func markDeviceReported(_ report: DeviceReport) throws(StoreError) {
        try write { database throws(StoreError) in
            if report.left {
                try database.run(
                    """
                    UPDATE devices SET report_from = NULL,
                        reported_profile = CASE WHEN reported_profile = ?2 THEN NULL ELSE reported_profile END
                    WHERE mac = ?1 AND report_from = ?2
                    """, report.device.mac, report.profile)
            } else {
                try database.run(
                    """
                    UPDATE devices SET report_to = NULL, reported_profile = ?2
                    WHERE mac = ?1 AND report_to = ?2 AND changed_at = ?3 AND name IS ?4
                    """, report.device.mac, report.profile, report.device.changedAt, report.device.name)
            }
        }
    }
}
