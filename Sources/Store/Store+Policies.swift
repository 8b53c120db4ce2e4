/// The last good policy of a profile, as the API sent it: enforced at start before any
/// network call (docs/sync.md#polling), so a gateway that boots without internet still filters.
public struct CachedPolicy: Sendable, Equatable {
    public var profile: String
    /// The CompiledPolicy document exactly as received (decoded by the caller).
    public var json: [UInt8]
    public var version: Int
    public var policyID: String
    /// Unix seconds.
    public var fetchedAt: Int64

    public init(profile: String, json: [UInt8], version: Int, policyID: String, fetchedAt: Int64) {
        self.profile = profile
        self.json = json
        self.version = version
        self.policyID = policyID
        self.fetchedAt = fetchedAt
    }
}

extension Store {
    /// Replaces the profile's cached policy. Called after a validated policy was swapped in.
    public func savePolicy(_ policy: CachedPolicy) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                """
                INSERT INTO policies (profile, json, version, policy_id, fetched_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (profile) DO UPDATE SET
                    json = excluded.json, version = excluded.version,
                    policy_id = excluded.policy_id, fetched_at = excluded.fetched_at
                """, policy.profile, policy.json, policy.version, policy.policyID, policy.fetchedAt)
        }
    }

    /// The profile's cached policy, or nil when none was ever saved.
    public func policy(profile: String) throws(StoreError) -> CachedPolicy? {
        try withDatabase { database throws(StoreError) in
            try database.firstRow(
                "SELECT profile, json, version, policy_id, fetched_at FROM policies WHERE profile = ?", profile
            ) { row in
                CachedPolicy(
                    profile: row.text(0), json: row.blob(1), version: row.int(2),
                    policyID: row.text(3), fetchedAt: row.int64(4))
            }
        }
    }

    /// Forgets the profile's cached policy (a profile removed from the configuration).
    public func removePolicy(profile: String) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM policies WHERE profile = ?", profile)
        }
    }
}
