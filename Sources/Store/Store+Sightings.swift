/// One device a profile served: what `status` lists under "clients seen".
public struct ClientSighting: Sendable, Equatable {
    public var profile: String
    /// The MAC when known, else the address: what the device is known by.
    public var client: String
    /// The address it last asked from.
    public var address: String?
    public var mac: String?
    /// Unix seconds.
    public var firstSeen: Int64
    public var lastSeen: Int64
    /// Queries (DNS questions, CONNECTs, plain-HTTP requests) counted since `firstSeen`.
    public var queries: Int

    public init(
        profile: String, client: String, address: String?, mac: String?, firstSeen: Int64, lastSeen: Int64,
        queries: Int
    ) {
        self.profile = profile
        self.client = client
        self.address = address
        self.mac = mac
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.queries = queries
    }
}

extension Store {
    /// Adds one flush's sightings in one transaction: a device already known gets the new
    /// `lastSeen`, its latest address and the queries added; the first sighting stays.
    /// Returns the sightings of devices the store knew under no profile before: new on the
    /// network (for the parent's notification).
    @discardableResult
    public func recordSightings(_ sightings: [ClientSighting]) throws(StoreError) -> [ClientSighting] {
        guard !sightings.isEmpty else { return [] }
        return try write { database throws(StoreError) in
            var new: [ClientSighting] = []
            for sighting in sightings {
                let known = try database.firstRow(
                    """
                    SELECT 1 FROM client_sightings WHERE client = ?1
                    UNION ALL SELECT 1 FROM shared_sightings WHERE client = ?1 LIMIT 1
                    """, sighting.client
                ) { _ in true }
                if known == nil { new.append(sighting) }
                try database.run(
                    """
                    INSERT INTO client_sightings (profile, client, address, mac, first_seen, last_seen, queries)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (profile, client) DO UPDATE SET
                        address = coalesce(excluded.address, address), mac = coalesce(excluded.mac, mac),
                        last_seen = max(last_seen, excluded.last_seen), queries = queries + excluded.queries
                    """, sighting.profile, sighting.client, sighting.address, sighting.mac, sighting.firstSeen,
                    sighting.lastSeen, sighting.queries)
            }
            return new
        }
    }

    /// The devices seen at or after `since` (unix seconds), by profile then most recent
    /// first: with a shared store, as every gateway saw them (a device seen by two is one,
    /// its queries added, its first and last sight the earliest and latest, its address the
    /// latest).
    public func sightings(since: Int64) throws(StoreError) -> [ClientSighting] {
        try withDatabase { database throws(StoreError) in
            let shared = try database.integer("SELECT EXISTS (SELECT 1 FROM shared_sightings)") == 1
            let rows = try database.rows(
                shared
                    ? """
                    WITH seen AS (
                        SELECT profile, client, address, mac, first_seen, last_seen, queries FROM client_sightings
                        UNION ALL
                        SELECT profile, client, address, mac, first_seen, last_seen, queries FROM shared_sightings)
                    SELECT profile, client, address, mac, first_seen, last_seen, queries FROM seen
                    WHERE (profile, client) IN (SELECT profile, client FROM seen WHERE last_seen >= ?)
                    """
                    : """
                    SELECT profile, client, address, mac, first_seen, last_seen, queries FROM client_sightings
                    WHERE last_seen >= ?
                    """, since
            ) { row in
                ClientSighting(
                    profile: row.text(0), client: row.text(1), address: row.optionalText(2), mac: row.optionalText(3),
                    firstSeen: row.int64(4), lastSeen: row.int64(5), queries: row.int(6))
            }
            var merged: [String: ClientSighting] = [:]
            for row in rows {
                let key = row.profile + "\u{0}" + row.client
                guard var known = merged[key] else {
                    merged[key] = row
                    continue
                }
                if row.lastSeen > known.lastSeen {
                    known.address = row.address ?? known.address
                    known.mac = row.mac ?? known.mac
                }
                known.firstSeen = min(known.firstSeen, row.firstSeen)
                known.lastSeen = max(known.lastSeen, row.lastSeen)
                known.queries += row.queries
                merged[key] = known
            }
            return merged.values.sorted { ($0.profile, $1.lastSeen, $0.client) < ($1.profile, $0.lastSeen, $1.client) }
        }
    }

    /// Forgets devices not seen since `before`; returns how many.
    @discardableResult
    public func pruneSightings(before: Int64) throws(StoreError) -> Int {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM client_sightings WHERE last_seen < ?", before)
            let changes = database.changes
            try database.run("DELETE FROM shared_sightings WHERE last_seen < ?", before)
            return changes
        }
    }
}

/// The sightings between this store and the shared one (docs/two-gateways.md).
extension Store {
    /// Sightings counted here since they were last written to the shared store, oldest first.
    public func unsharedSightings(limit: Int) throws(StoreError) -> [ClientSighting] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT profile, client, address, mac, first_seen, last_seen, queries FROM client_sightings
                WHERE shared_queries IS NOT queries ORDER BY last_seen LIMIT ?
                """, limit
            ) { row in
                ClientSighting(
                    profile: row.text(0), client: row.text(1), address: row.optionalText(2), mac: row.optionalText(3),
                    firstSeen: row.int64(4), lastSeen: row.int64(5), queries: row.int(6))
            }
        }
    }

    /// The shared store has `sightings` as they were read (one counted again meanwhile
    /// stays to be written).
    public func markSightingsShared(_ sightings: [ClientSighting]) throws(StoreError) {
        try write { database throws(StoreError) in
            for sighting in sightings {
                try database.run(
                    """
                    UPDATE client_sightings SET shared_queries = ?3 WHERE profile = ?1 AND client = ?2 AND queries = ?3
                    """, sighting.profile, sighting.client, sighting.queries)
            }
        }
    }
}
