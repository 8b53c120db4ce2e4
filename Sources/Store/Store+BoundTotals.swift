/// What the hit bounds took from one profile since the store was made
/// (docs/sync.md#bounds): rows the queue and history bounds merged away or dropped, and
/// names folded into their rule past the per-minute rate.
public struct HitBoundTotals: Sendable, Equatable {
    public var queueRows: Int
    public var historyRows: Int
    public var namesFolded: Int

    public init(queueRows: Int = 0, historyRows: Int = 0, namesFolded: Int = 0) {
        self.queueRows = queueRows
        self.historyRows = historyRows
        self.namesFolded = namesFolded
    }

    public var isEmpty: Bool { queueRows == 0 && historyRows == 0 && namesFolded == 0 }
}

extension Store {
    /// The profile's totals (all zero for a profile the bounds never touched).
    public func boundTotals(profile: String) throws(StoreError) -> HitBoundTotals {
        try withDatabase { database throws(StoreError) in
            try database.firstRow(
                "SELECT queue_rows, history_rows, names_folded FROM hit_bound_totals WHERE profile = ?", profile
            ) { row in HitBoundTotals(queueRows: row.int(0), historyRows: row.int(1), namesFolded: row.int(2)) }
                ?? HitBoundTotals()
        }
    }

    /// Adds names the flush folded into their rule, per profile, in one transaction.
    public func addFoldedNames(_ byProfile: [String: Int]) throws(StoreError) {
        guard byProfile.values.contains(where: { $0 > 0 }) else { return }
        try write { database throws(StoreError) in
            for (profile, count) in byProfile where count > 0 {
                try Self.addTotals(profile: profile, column: "names_folded", count, database)
            }
        }
    }
}

extension Store {
    /// Rows in the hit queue (queued and batched) and in the history, all profiles: what
    /// `hit_queue_max` and `hit_history_max` bound.
    public func hitRowCounts() throws(StoreError) -> (queue: Int, history: Int) {
        try withDatabase { database throws(StoreError) in
            (
                try database.integer("SELECT count(*) FROM hit_queue"),
                try database.integer("SELECT count(*) FROM hit_history")
            )
        }
    }
}
