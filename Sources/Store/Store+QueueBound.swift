/// The bounds on the hit queue (`hit_queue_max`) and the history (`hit_history_max`),
/// docs/sync.md#bounds: beyond one, the table's oldest rows are merged, coarser step by
/// step, until it is back at 90 % of the bound (so the work is not done at every flush);
/// when merging cannot bring it within the bound (every old row of its own rule and
/// reason) the oldest are dropped. Rows merged or dropped are counted per profile: for the queue as
/// `merged_events` of the next batch, for both in `hit_bound_totals` (`status`,
/// `/metrics`). Everything runs in SQL over the oldest rows, so a bound reached by
/// hundreds of thousands of random names never brings them into memory.
extension Store {
    /// How a table is folded: the steps in order, each coarser than the one before.
    enum FoldStep: CaseIterable {
        /// Rows of one name (and reason and source): one row with client `*`.
        case clients
        /// Rows of one rule: one `*.RULE` row (`*` without a rule), client `*`.
        case rules
        /// Rows of one reason: one `*` row, client `*`.
        case reasons

        /// The merged row's domain, from a row's columns.
        var domain: String {
            switch self {
            case .clients: "domain"
            case .rules: "CASE WHEN matched IS NULL THEN '*' ELSE '*.' || matched END"
            case .reasons: "'*'"
            }
        }

        var matched: String { self == .reasons ? "NULL" : "max(matched)" }

        /// A merged row of one name stands for the names of its parts (0 for the name
        /// itself); a fold counts the distinct names asked among its parts and the names
        /// folded into the others.
        var names: String {
            self == .clients ? "max(names)" : "count(DISTINCT CASE WHEN names = 0 THEN domain END) + sum(names)"
        }
    }

    /// What differs between the two bounded tables.
    struct BoundedTable {
        let name: String
        /// The rows a bound may touch (queued rows; batched ones are frozen).
        let open: String
        /// Oldest first: a time and the row's id.
        let age: String
        /// A further column of the merge key (the history's bucket), or `0`; and as a
        /// GROUP BY term (none for `0`, which SQLite would read as a column number).
        let bucket: String
        let groupBucket: String
        /// The policy version a merged row keeps, or `0`.
        let policyVersion: String
        /// Inserts `temp.hit_fold_rows` into the table, adding to rows of the same key.
        let insertFolded: String

        static let queue = BoundedTable(
            name: "hit_queue", open: "batch_id IS NULL", age: "first_seen, id", bucket: "0",
            groupBucket: "",
            policyVersion: "max(policy_version)",
            insertFolded: """
                INSERT INTO hit_queue (\(HitRow.columns))
                SELECT profile, domain, matched, reason, category, '*', source, count, first_seen, last_seen,
                    policy_version, names FROM temp.hit_fold_rows WHERE true
                ON CONFLICT (profile, domain, reason, client, source) WHERE batch_id IS NULL DO UPDATE SET
                    count = count + excluded.count, names = names + excluded.names,
                    matched = CASE WHEN excluded.last_seen >= last_seen THEN excluded.matched ELSE matched END,
                    category = coalesce(excluded.category, category),
                    policy_version = max(policy_version, excluded.policy_version),
                    first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)
                """)

        static let history = BoundedTable(
            name: "hit_history", open: "1", age: "last_seen, rowid", bucket: "bucket",
            groupBucket: ", bucket", policyVersion: "0",
            insertFolded: """
                INSERT INTO hit_history (profile, domain, reason, client, source, bucket, matched, category,
                    count, first_seen, last_seen, names)
                SELECT profile, domain, reason, '*', source, bucket, matched, category, count, first_seen,
                    last_seen, names FROM temp.hit_fold_rows WHERE true
                ON CONFLICT (profile, domain, reason, client, source, bucket) DO UPDATE SET
                    count = count + excluded.count, names = names + excluded.names,
                    matched = CASE WHEN excluded.last_seen >= last_seen THEN excluded.matched ELSE matched END,
                    category = coalesce(excluded.category, category),
                    first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)
                """)
    }

    /// Called inside `enqueue`'s transaction, after the new rows are in. Returns the rows
    /// merged away or dropped (0 within `maxRows`), added to each profile's pending
    /// `merged_events`.
    static func applyQueueBound(maxRows: Int, _ database: Database) throws(StoreError) -> Int {
        let total = try database.integer("SELECT count(*) FROM hit_queue")
        guard total > max(0, maxRows) else { return 0 }
        let removed = try fold(.queue, over: total, bound: maxRows, database)
        for (profile, count) in removed {
            try database.run(
                """
                INSERT INTO hit_merge_pending (profile, merged_pending) VALUES (?, ?)
                ON CONFLICT (profile) DO UPDATE SET merged_pending = merged_pending + excluded.merged_pending
                """, profile, count)
            try addTotals(profile: profile, column: "queue_rows", count, database)
        }
        return removed.values.reduce(0, +)
    }

    /// Called inside `recordHistory`'s transaction. Returns the rows merged away or dropped.
    static func applyHistoryBound(maxRows: Int, _ database: Database) throws(StoreError) -> Int {
        let total = try database.integer("SELECT count(*) FROM hit_history")
        guard total > max(0, maxRows) else { return 0 }
        let removed = try fold(.history, over: total, bound: maxRows, database)
        for (profile, count) in removed { try addTotals(profile: profile, column: "history_rows", count, database) }
        return removed.values.reduce(0, +)
    }

    /// Brings `table` (of `total` rows) towards 90 % of `bound`: each step over the oldest
    /// half of its open rows (more when more must go); then the oldest dropped while over
    /// `bound`. Returns the rows gone, per profile.
    private static func fold(
        _ table: BoundedTable, over total: Int, bound: Int, _ database: Database
    ) throws(StoreError) -> [String: Int] {
        let target = max(0, bound) * 9 / 10
        let before = try openRows(table, database)
        try database.execute(
            """
            CREATE TEMP TABLE IF NOT EXISTS hit_fold_window (id INTEGER PRIMARY KEY);
            CREATE TEMP TABLE IF NOT EXISTS hit_fold_rows (profile, domain, matched, reason, category, source,
                bucket, count, first_seen, last_seen, policy_version, names);
            """)
        // The window: the oldest half of the open rows (more when more must go), up to the
        // last of them by age and id. A merged row is as old as its oldest part (the
        // history: its newest), so each step works on what the steps before it left.
        var total = total
        let open = try database.integer("SELECT count(*) FROM \(table.name) WHERE \(table.open)")
        let window = min(max(open / 2, total - target), open)
        if window > 0,
            let cutoff = try database.firstRow(
                "SELECT \(table.age) FROM \(table.name) WHERE \(table.open) ORDER BY \(table.age) LIMIT 1 OFFSET ?",
                window - 1, make: { row in (age: row.int64(0), row: row.int64(1)) })
        {
            for step in FoldStep.allCases where total > target {
                try merge(table, step: step, upTo: cutoff, database)
                total = try database.integer("SELECT count(*) FROM \(table.name)")
            }
        }
        // Still over the bound itself: the same steps over every open row, newest too,
        // before anything is dropped, so counts are folded rather than lost when they can be.
        if total > bound {
            for step in FoldStep.allCases where total > bound {
                try merge(table, step: step, upTo: (age: .max, row: .max), database)
                total = try database.integer("SELECT count(*) FROM \(table.name)")
            }
        }
        // Merging aims at 90 %; dropping only takes what is still over the bound itself, and
        // never the newest open row: rows of a batch in flight, which cannot be dropped, do
        // not make every new hit go.
        if total > bound {
            let open = try database.integer("SELECT count(*) FROM \(table.name) WHERE \(table.open)")
            let batched = total - open
            try database.run(
                """
                DELETE FROM \(table.name) WHERE rowid IN
                    (SELECT rowid FROM \(table.name) WHERE \(table.open) ORDER BY \(table.age) LIMIT ?)
                """, batched >= max(0, bound) ? max(0, open - 1) : total - max(0, bound))
        }
        let after = try openRows(table, database)
        var removed: [String: Int] = [:]
        for (profile, count) in before where count > (after[profile] ?? 0) {
            removed[profile] = count - (after[profile] ?? 0)
        }
        return removed
    }

    /// One step over the open rows no younger than `cutoff`: each group of two or more rows
    /// of the step's key becomes one row (counts summed, the span widened), which joins a
    /// row of the same key outside the window if there is one.
    private static func merge(
        _ table: BoundedTable, step: FoldStep, upTo cutoff: (age: Int64, row: Int64), _ database: Database
    ) throws(StoreError) {
        try database.execute("DELETE FROM temp.hit_fold_window; DELETE FROM temp.hit_fold_rows;")
        try database.run(
            """
            INSERT INTO temp.hit_fold_window (id)
            SELECT rowid FROM \(table.name) WHERE \(table.open) AND (\(table.age)) <= (?, ?)
            """, cutoff.age, cutoff.row)
        let members = "rowid IN (SELECT id FROM temp.hit_fold_window)"
        try database.execute(
            """
            INSERT INTO temp.hit_fold_rows
            SELECT profile, \(step.domain), \(step.matched), reason, max(category), source, \(table.bucket),
                sum(count), min(first_seen), max(last_seen), \(table.policyVersion), \(step.names)
            FROM \(table.name) WHERE \(members)
            GROUP BY profile, \(step.domain), reason, source\(table.groupBucket) HAVING count(*) > 1;
            DELETE FROM \(table.name) WHERE \(members)
                AND (profile, \(step.domain), reason, source, \(table.bucket)) IN
                    (SELECT profile, domain, reason, source, bucket FROM temp.hit_fold_rows);
            \(table.insertFolded);
            DELETE FROM temp.hit_fold_window; DELETE FROM temp.hit_fold_rows;
            """)
    }

    private static func openRows(_ table: BoundedTable, _ database: Database) throws(StoreError) -> [String: Int] {
        var counts: [String: Int] = [:]
        try database.forEach("SELECT profile, count(*) FROM \(table.name) WHERE \(table.open) GROUP BY profile") {
            row throws(StoreError) in
            counts[row.text(0)] = row.int(1)
            return true
        }
        return counts
    }

    static func addTotals(profile: String, column: String, _ count: Int, _ database: Database) throws(StoreError) {
        try database.run(
            """
            INSERT INTO hit_bound_totals (profile, \(column)) VALUES (?, ?)
            ON CONFLICT (profile) DO UPDATE SET \(column) = \(column) + excluded.\(column)
            """, profile, count)
    }
}
