/// Instants the parent's page remembers (docs/parent-page.md#pages), such as when the
/// parent last marked the devices as seen.
extension Store {
    /// The instant stored under `name` (Unix seconds), or nil when none was ever set.
    public func pageMark(_ name: String) throws(StoreError) -> Int64? {
        try withDatabase { database throws(StoreError) in
            try database.firstRow("SELECT at FROM page_marks WHERE name = ?", name) { $0.int64(0) }
        }
    }

    /// Moves the mark `name` forward to `at`; an earlier instant leaves it where it is, so
    /// a page left open in another tab, posting late, does not bring back devices already
    /// seen.
    public func advancePageMark(_ name: String, to at: Int64) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                """
                INSERT INTO page_marks (name, at) VALUES (?, ?)
                ON CONFLICT (name) DO UPDATE SET at = max(at, excluded.at)
                """, name, at)
        }
    }
}
