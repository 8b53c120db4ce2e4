import Store

/// The parent's overrides and devices, the children's requests and app minutes copied both
/// ways between this gateway's SQLite store and the shared store
/// (docs/two-gateways.md#what-is-shared). SQLite stays what every part of the gateway
/// reads; this copies what changed here up (`push`) and what changed anywhere down
/// (`pull`), and says whether anything here changed.
extension SharedStore {
    /// The lock every writer of changes takes for its transaction, so the `changes`
    /// numbers are committed in the order they are taken ("phgc" in ASCII).
    static let changesLockKey = "1885890403"
    /// The channel a writer notifies, with its gateway id as the payload.
    public static let channel = "phosra_gate_changes"

    /// Asks the server for a notification whenever another gateway writes a change.
    public func listen() throws(SharedStoreError) {
        try connection.execute("LISTEN \(Self.channel)")
    }

    /// The connection's socket, readable when a notification (or anything) came.
    public var socket: Int32 { connection.socket }

    /// Notifications that came from other gateways since the last call.
    public func othersChanged() throws(SharedStoreError) -> Bool {
        try connection.notifications().contains { $0 != gateway }
    }

    /// Whether this database has numbered fewer changes than `store` has read: then it is
    /// not the one `store` read (a new database, or one restored from a backup), and
    /// `store` forgets what it shared, so everything is written again and read again.
    /// Returns whether it did.
    public func adopt(_ store: Store) throws(SharedStoreError) -> Bool {
        let rows = try connection.execute("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM changes")
        let last = rows.first?.first.flatMap { $0.flatMap { Int64($0) } } ?? 0
        do {
            // Each stream's mark counts: a gateway with no override, device or request
            // yet has read history or sessions all the same.
            let marks = [
                try store.sharedState()?.pulled ?? 0, try store.sharedHistoryMark(),
                try store.sharedPageState().pulled,
            ]
            guard let mark = marks.max(), mark > last else { return false }
            try store.forgetShared()
        } catch {
            throw .local("\(error)")
        }
        return true
    }

    /// Writes every override, device and request changed here and not yet shared, and
    /// `minutes`, in one transaction; returns how many. A device another gateway changed
    /// later keeps that change, which is then taken here; an override already removed
    /// there stays so, and a request answered there keeps that answer.
    @discardableResult
    public func push(from store: Store, minutes: [MinuteFact] = []) throws(SharedStoreError) -> Int {
        let overrides: [OverrideRow]
        let devices: [DeviceRow]
        let requests: [(request: RequestRow, overrideUID: String?)]
        do {
            overrides = try store.unsharedOverrides(limit: 500)
            devices = try store.unsharedDevices()
            requests = try store.unsharedRequests(limit: 500)
        } catch {
            throw .local("\(error)")
        }
        guard !overrides.isEmpty || !devices.isEmpty || !minutes.isEmpty || !requests.isEmpty else { return 0 }
        var lost: [(local: DeviceRow, shared: DeviceRow)] = []
        var answered: [(request: RequestRow, overrideUID: String?)] = []
        try transaction { () throws(SharedStoreError) in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [Self.changesLockKey])
            for row in overrides {
                try connection.execute(
                    """
                    INSERT INTO overrides (uid, profile, kind, target, minutes, day, starts_at, ends_at, set_by,
                        removed_at, removed_by, gateway, seq)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, nextval('changes'))
                    ON CONFLICT (uid) DO UPDATE SET removed_at = excluded.removed_at,
                        removed_by = excluded.removed_by, seq = excluded.seq
                    WHERE overrides.removed_at IS NULL AND excluded.removed_at IS NOT NULL
                    """,
                    [
                        uid(row), row.profile, row.kind, row.target, row.minutes.map { "\($0)" },
                        row.day.map { "\($0)" }, "\(row.startsAt)", row.endsAt.map { "\($0)" }, row.setBy,
                        row.removedAt.map { "\($0)" }, row.removedBy, gateway,
                    ])
            }
            for row in devices {
                let taken = try connection.execute(
                    """
                    INSERT INTO devices (mac, name, profile, changed_at, changed_by, gateway, seq)
                    VALUES ($1, $2, $3, $4, $5, $6, nextval('changes'))
                    ON CONFLICT (mac) DO UPDATE SET name = excluded.name, profile = excluded.profile,
                        changed_at = excluded.changed_at, changed_by = excluded.changed_by,
                        gateway = excluded.gateway, seq = excluded.seq
                    WHERE (excluded.changed_at, excluded.gateway) >= (devices.changed_at, devices.gateway)
                    RETURNING 1
                    """, [row.mac, row.name, row.profile, "\(row.changedAt)", row.changedBy, gateway])
                guard taken.isEmpty else { continue }
                if let shared = try sharedDevices(where: "mac = $1", [row.mac]).first {
                    lost.append((row, shared))
                }
            }
            _ = try insert(minutes)
            for (row, overrideUID) in requests {
                let shared = try write(row, overrideUID: overrideUID ?? row.overrideID.map { "\(gateway):\($0)" })
                if shared.request.answer != row.answer { answered.append(shared) }
            }
            try connection.execute("SELECT pg_notify($1, $2)", [Self.channel, gateway])
        }
        do {
            for row in overrides { try store.markOverrideShared(row, uid: uid(row)) }
            for row in devices { try store.markDeviceShared(row) }
            for (row, _) in requests { try store.markRequestShared(row, uid: uid(row)) }
            // Marked shared first, so the change the shared store kept is taken.
            if !lost.isEmpty || !answered.isEmpty {
                _ = try store.mergeShared(overrides: [], devices: lost.map(\.shared), requests: answered, pulled: 0)
            }
        } catch {
            throw .local("\(error)")
        }
        return overrides.count + devices.count + minutes.count + requests.count
    }

    /// One request, asked or answered; returns it as the shared store keeps it (an earlier
    /// answer from another gateway stays).
    private func write(
        _ row: RequestRow, overrideUID: String?
    ) throws(SharedStoreError) -> (request: RequestRow, overrideUID: String?) {
        let rows = try connection.execute(
            """
            INSERT INTO requests (uid, profile, device, address, kind, target, note, asked_at, expires_at, answer,
                minutes, answered_at, answered_by, override_uid, gateway, seq)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, nextval('changes'))
            ON CONFLICT (uid) DO UPDATE SET answer = excluded.answer, minutes = excluded.minutes,
                answered_at = excluded.answered_at, answered_by = excluded.answered_by,
                override_uid = excluded.override_uid, seq = excluded.seq
            WHERE requests.answer IS NULL AND excluded.answer IS NOT NULL
            RETURNING uid
            """,
            [
                uid(row), row.profile, row.device, row.address, row.kind, row.target, row.note, "\(row.askedAt)",
                "\(row.expiresAt)", row.answer, row.minutes.map { "\($0)" }, row.answeredAt.map { "\($0)" },
                row.answeredBy, overrideUID, gateway,
            ])
        guard rows.isEmpty else { return (row, overrideUID) }
        return try requestRows("uid = $1", [uid(row)]).first?.0 ?? (row, overrideUID)
    }

    /// What a read of the shared store brought: whether the local store changed, and the
    /// minutes other gateways counted (for the daemon's memory, which the local store's
    /// next flush saves).
    public struct Pulled: Sendable, Equatable {
        public var changed: Bool
        public var minutes: [MinuteFact]
    }

    /// Reads every change past this store's mark, in one snapshot, and merges overrides,
    /// devices and requests here; the minutes are the caller's to count.
    @discardableResult
    public func pull(into store: Store) throws(SharedStoreError) -> Pulled {
        let mark: Int64
        do { mark = try store.sharedState()?.pulled ?? 0 } catch { throw .local("\(error)") }
        var overrides: [(OverrideRow, Int64)] = []
        var devices: [(DeviceRow, Int64)] = []
        var minutes: [(MinuteFact, Int64)] = []
        var requests: [((request: RequestRow, overrideUID: String?), Int64)] = []
        try transaction(isolation: "REPEATABLE READ") { () throws(SharedStoreError) in
            for row in try connection.execute(
                """
                SELECT uid, profile, kind, target, minutes, day, starts_at, ends_at, set_by, removed_at, removed_by, seq
                FROM overrides WHERE seq > $1 ORDER BY seq
                """, ["\(mark)"])
            {
                guard let override = Self.override(row), let seq = row[11].flatMap({ Int64($0) }) else {
                    throw .malformed("overrides", row.first.flatMap { $0 } ?? "?")
                }
                overrides.append((override, seq))
            }
            devices = try sharedDeviceRows(where: "seq > $1", ["\(mark)"])
            minutes = try factRows("seq > $1", ["\(mark)"])
            requests = try requestRows("seq > $1", ["\(mark)"])
        }
        let numbers = [overrides.map(\.1), devices.map(\.1), minutes.map(\.1), requests.map(\.1)].joined()
        let pulled = max(numbers.max() ?? mark, mark)
        guard pulled > mark else { return Pulled(changed: false, minutes: []) }
        do {
            let changed = try store.mergeShared(
                overrides: overrides.map(\.0), devices: devices.map(\.0), requests: requests.map(\.0), pulled: pulled)
            return Pulled(changed: changed, minutes: minutes.map(\.0))
        } catch {
            throw .local("\(error)")
        }
    }

    /// `GATEWAY:ID` for an override made here, its own for one that came from elsewhere.
    func uid(_ row: OverrideRow) -> String { row.uid ?? "\(gateway):\(row.id)" }

    /// The same for a request.
    func uid(_ row: RequestRow) -> String { row.uid ?? "\(gateway):\(row.id)" }

    private func requestRows(
        _ condition: String, _ parameters: [String?]
    ) throws(SharedStoreError) -> [((request: RequestRow, overrideUID: String?), Int64)] {
        var out: [((request: RequestRow, overrideUID: String?), Int64)] = []
        for row in try connection.execute(
            """
            SELECT uid, profile, device, address, kind, target, note, asked_at, expires_at, answer, minutes,
                answered_at, answered_by, override_uid, seq
            FROM requests WHERE \(condition) ORDER BY seq
            """, parameters)
        {
            guard let uid = row[0], let profile = row[1], let device = row[2], let address = row[3],
                let kind = row[4], let note = row[6], let askedAt = row[7].flatMap({ Int64($0) }),
                let expiresAt = row[8].flatMap({ Int64($0) }), let seq = row[14].flatMap({ Int64($0) })
            else { throw .malformed("requests", row.first.flatMap { $0 } ?? "?") }
            let request = RequestRow(
                profile: profile, device: device, address: address, kind: kind, target: row[5], note: note,
                askedAt: askedAt, expiresAt: expiresAt, answer: row[9], minutes: row[10].flatMap { Int($0) },
                answeredAt: row[11].flatMap { Int64($0) }, answeredBy: row[12], uid: uid)
            out.append(((request, row[13]), seq))
        }
        return out
    }

    func sharedDevices(where condition: String, _ parameters: [String?]) throws(SharedStoreError) -> [DeviceRow] {
        try sharedDeviceRows(where: condition, parameters).map(\.0)
    }

    private func sharedDeviceRows(
        where condition: String, _ parameters: [String?]
    ) throws(SharedStoreError) -> [(DeviceRow, Int64)] {
        var out: [(DeviceRow, Int64)] = []
        for row in try connection.execute(
            "SELECT mac, name, profile, changed_at, changed_by, seq FROM devices WHERE \(condition) ORDER BY seq",
            parameters)
        {
            guard let mac = row[0], let changedAt = row[3].flatMap({ Int64($0) }), let by = row[4],
                let seq = row[5].flatMap({ Int64($0) })
            else { throw .malformed("devices", row.first.flatMap { $0 } ?? "?") }
            out.append((DeviceRow(mac: mac, name: row[1], profile: row[2], changedAt: changedAt, changedBy: by), seq))
        }
        return out
    }

    static func override(_ row: [String?]) -> OverrideRow? {
        guard let uid = row[0], let profile = row[1], let kind = row[2], let startsAt = row[6].flatMap({ Int64($0) }),
            let setBy = row[8]
        else { return nil }
        return OverrideRow(
            profile: profile, kind: kind, target: row[3], minutes: row[4].flatMap { Int($0) },
            day: row[5].flatMap { Int($0) }, startsAt: startsAt, endsAt: row[7].flatMap { Int64($0) }, setBy: setBy,
            removedAt: row[9].flatMap { Int64($0) }, removedBy: row[10], uid: uid)
    }

    /// Runs `body` in one transaction, rolled back when it throws.
    func transaction(
        isolation: String? = nil, _ body: () throws(SharedStoreError) -> Void
    ) throws(SharedStoreError) {
        try connection.execute(isolation.map { "BEGIN ISOLATION LEVEL \($0)" } ?? "BEGIN")
        do throws(SharedStoreError) {
            try body()
            try connection.execute("COMMIT")
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }
}
