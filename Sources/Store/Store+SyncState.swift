/// Where a profile's sync with the Phosra API stands (docs/sync.md#polling), for the sync loop
/// to resume after a restart and for `status` to show.
public struct SyncState: Sendable, Equatable {
    public var profile: String
    /// The policy version being enforced (0: none yet).
    public var appliedVersion: Int
    public var policyID: String
    /// Times are Unix seconds.
    public var lastSyncAt: Int64?
    public var lastSuccessAt: Int64?
    public var lastError: String?
    public var lastErrorAt: Int64?
    /// When the current run of 401 answers began; nil once a request is authorised again.
    public var unauthorizedSince: Int64?
    /// 401s have lasted `revoke_after`: shown as revoked (key and policy are kept).
    public var revoked: Bool
    /// The API answered 404: no active policy for this child.
    public var noActivePolicy: Bool
    /// With `noActivePolicy`: true when the profile went unfiltered (`on_no_policy = allow`).
    public var noPolicyUnfiltered: Bool = false
    /// The last version acknowledged with `POST /device/ack`.
    public var ackedVersion: Int
    /// The last version whose enforcement status was reported.
    public var reportedVersion: Int
    public var nextFullSyncAt: Int64?

    public init(
        profile: String, appliedVersion: Int = 0, policyID: String = "", lastSyncAt: Int64? = nil,
        lastSuccessAt: Int64? = nil, lastError: String? = nil, lastErrorAt: Int64? = nil,
        unauthorizedSince: Int64? = nil, revoked: Bool = false, noActivePolicy: Bool = false,
        ackedVersion: Int = 0, reportedVersion: Int = 0, nextFullSyncAt: Int64? = nil
    ) {
        self.profile = profile
        self.appliedVersion = appliedVersion
        self.policyID = policyID
        self.lastSyncAt = lastSyncAt
        self.lastSuccessAt = lastSuccessAt
        self.lastError = lastError
        self.lastErrorAt = lastErrorAt
        self.unauthorizedSince = unauthorizedSince
        self.revoked = revoked
        self.noActivePolicy = noActivePolicy
        self.ackedVersion = ackedVersion
        self.reportedVersion = reportedVersion
        self.nextFullSyncAt = nextFullSyncAt
    }
}

extension Store {
    /// Replaces the profile's sync state.
    public func saveSyncState(_ state: SyncState) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                """
                INSERT OR REPLACE INTO sync_state (profile, applied_version, policy_id, last_sync_at, last_success_at,
                    last_error, last_error_at, unauthorized_since, revoked, no_active_policy, acked_version,
                    reported_version, next_full_sync_at, no_policy_unfiltered)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, state.profile, state.appliedVersion, state.policyID, state.lastSyncAt, state.lastSuccessAt,
                state.lastError, state.lastErrorAt, state.unauthorizedSince, state.revoked, state.noActivePolicy,
                state.ackedVersion, state.reportedVersion, state.nextFullSyncAt, state.noPolicyUnfiltered)
        }
    }

    /// The profile's sync state, or nil before its first sync.
    public func syncState(profile: String) throws(StoreError) -> SyncState? {
        try withDatabase { database throws(StoreError) in
            try database.firstRow(Self.selectSyncState + " WHERE profile = ?", profile, make: Self.syncState(from:))
        }
    }

    /// Every profile's sync state, by profile name.
    public func allSyncStates() throws(StoreError) -> [SyncState] {
        try withDatabase { database throws(StoreError) in
            try database.rows(Self.selectSyncState + " ORDER BY profile", make: Self.syncState(from:))
        }
    }

    private static let selectSyncState = """
        SELECT profile, applied_version, policy_id, last_sync_at, last_success_at, last_error, last_error_at,
            unauthorized_since, revoked, no_active_policy, acked_version, reported_version, next_full_sync_at,
            no_policy_unfiltered
        FROM sync_state
        """

    private static func syncState(from row: Row) -> SyncState {
        var state = SyncState(
            profile: row.text(0), appliedVersion: row.int(1), policyID: row.text(2),
            lastSyncAt: row.optionalInt64(3), lastSuccessAt: row.optionalInt64(4),
            lastError: row.optionalText(5), lastErrorAt: row.optionalInt64(6),
            unauthorizedSince: row.optionalInt64(7), revoked: row.bool(8), noActivePolicy: row.bool(9),
            ackedVersion: row.int(10), reportedVersion: row.int(11), nextFullSyncAt: row.optionalInt64(12))
        state.noPolicyUnfiltered = row.bool(13)
        return state
    }
}
