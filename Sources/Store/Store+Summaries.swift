/// A child's daily summary as stored (docs/requests-and-notifications.md#the-daily-summary).
public struct SummaryRow: Sendable, Equatable {
    public var profile: String
    /// The local day, in days since 1970.
    public var day: Int
    /// Unix seconds.
    public var madeAt: Int64
    /// The summary as its JSON object.
    public var body: String

    public init(profile: String, day: Int, madeAt: Int64, body: String) {
        self.profile = profile
        self.day = day
        self.madeAt = madeAt
        self.body = body
    }
}

extension Store {
    /// Keeps a profile's summary of a day unless one was made already; returns whether
    /// this one was kept.
    @discardableResult
    public func addSummary(_ summary: SummaryRow) throws(StoreError) -> Bool {
        try write { database throws(StoreError) in
            try database.run(
                "INSERT INTO summaries (profile, day, made_at, body) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                summary.profile, summary.day, summary.madeAt, summary.body)
            return database.changes == 1
        }
    }

    /// The summaries of the days from `sinceDay` on (every profile's when `profile` is
    /// nil), the newest day first, then by profile.
    public func summaries(sinceDay: Int, profile: String? = nil) throws(StoreError) -> [SummaryRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT profile, day, made_at, body FROM summaries WHERE day >= ?1 AND (?2 IS NULL OR profile = ?2)
                ORDER BY day DESC, profile
                """, sinceDay, profile
            ) { row in SummaryRow(profile: row.text(0), day: row.int(1), madeAt: row.int64(2), body: row.text(3)) }
        }
    }

    /// Forgets summaries of days before `beforeDay` (kept 30 days).
    public func pruneSummaries(beforeDay: Int) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM summaries WHERE day < ?", beforeDay)
        }
    }
}
