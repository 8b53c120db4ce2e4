/// One service's minutes on one local day, as stored: a bit set (`MinuteSet`'s bytes).
public struct ServiceMinutesRow: Sendable, Equatable {
    public var profile: String
    /// Days since 1970 of the local date.
    public var day: Int
    public var service: String
    public var minutes: [UInt8]

    public init(profile: String, day: Int, service: String, minutes: [UInt8]) {
        self.profile = profile
        self.day = day
        self.service = service
        self.minutes = minutes
    }
}

/// A budget as `run` enforces it now, with the minutes used today (for `status`).
public struct BudgetStatusRow: Sendable, Equatable {
    public var profile: String
    public var service: String
    public var day: Int
    public var dailyMinutes: Int
    public var used: Int

    public init(profile: String, service: String, day: Int, dailyMinutes: Int, used: Int) {
        self.profile = profile
        self.service = service
        self.day = day
        self.dailyMinutes = dailyMinutes
        self.used = used
    }
}

/// App minutes per profile, day and service (docs/services.md#budgets), the days each
/// profile was served (for the daily `screen_time` report), and the budgets in force.
extension Store {
    /// Adds minutes to the stored ones (a union: a minute counted before a restart is not
    /// counted twice), notes `served` as days profiles were served, and replaces the
    /// budgets shown by `status` with `budgets` (nil: leave them). One transaction.
    /// `merge` turns two stored bit sets into one.
    public func saveServiceMinutes(
        _ rows: [ServiceMinutesRow], served: [(profile: String, day: Int)], budgets: [BudgetStatusRow]?,
        merge: ([UInt8], [UInt8]) -> [UInt8]
    ) throws(StoreError) {
        try write { database throws(StoreError) in
            for row in rows {
                var minutes = row.minutes
                try database.forEach(
                    "SELECT minutes FROM service_minutes WHERE profile = ? AND day = ? AND service = ?",
                    row.profile, row.day, row.service
                ) { stored throws(StoreError) in
                    minutes = merge(stored.blob(0), minutes)
                    return false
                }
                try database.run(
                    """
                    INSERT INTO service_minutes (profile, day, service, minutes) VALUES (?, ?, ?, ?)
                    ON CONFLICT (profile, day, service) DO UPDATE SET minutes = excluded.minutes
                    """, row.profile, row.day, row.service, minutes)
            }
            for day in served {
                try database.run(
                    "INSERT OR IGNORE INTO screen_time_days (profile, day) VALUES (?, ?)", day.profile, day.day)
            }
            if let budgets {
                try database.run("DELETE FROM budget_status")
                for budget in budgets {
                    try database.run(
                        """
                        INSERT INTO budget_status (profile, service, day, daily_minutes, used) VALUES (?, ?, ?, ?, ?)
                        """, budget.profile, budget.service, budget.day, budget.dailyMinutes, budget.used)
                }
            }
        }
    }

    /// Every service's minutes on `day` (every profile's when `profile` is nil).
    public func serviceMinutes(day: Int, profile: String? = nil) throws(StoreError) -> [ServiceMinutesRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT profile, day, service, minutes FROM service_minutes
                WHERE day = ? AND (? IS NULL OR profile = ?) ORDER BY profile, service
                """, day, profile, profile
            ) { row in
                ServiceMinutesRow(profile: row.text(0), day: row.int(1), service: row.text(2), minutes: row.blob(3))
            }
        }
    }

    /// The profile's days before `day` whose `screen_time` report was not sent, oldest first.
    public func unsentScreenTimeDays(profile: String, before day: Int) throws(StoreError) -> [Int] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                "SELECT day FROM screen_time_days WHERE profile = ? AND day < ? AND sent = 0 ORDER BY day",
                profile, day
            ) { row in row.int(0) }
        }
    }

    /// The report for the profile's day was accepted.
    public func markScreenTimeSent(profile: String, day: Int) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run("UPDATE screen_time_days SET sent = 1 WHERE profile = ? AND day = ?", profile, day)
        }
    }

    /// The budgets `run` last said it enforces.
    public func budgetStatus() throws(StoreError) -> [BudgetStatusRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                "SELECT profile, service, day, daily_minutes, used FROM budget_status ORDER BY profile, service"
            ) { row in
                BudgetStatusRow(
                    profile: row.text(0), service: row.text(1), day: row.int(2), dailyMinutes: row.int(3),
                    used: row.int(4))
            }
        }
    }

    /// Deletes minutes and served days before `day` (local days since 1970); returns how many rows.
    @discardableResult
    public func pruneServiceMinutes(before day: Int) throws(StoreError) -> Int {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM service_minutes WHERE day < ?", day)
            let minutes = database.changes
            try database.run("DELETE FROM screen_time_days WHERE day < ?", day)
            return minutes + database.changes
        }
    }
}
