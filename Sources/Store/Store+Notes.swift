/// Lines for `status` that outlive the process that wrote them: a database moved aside at
/// start, and whatever else the daemon wants an operator to read later.
extension Store {
    /// Every note, oldest first.
    public func notes() throws(StoreError) -> [String] {
        try withDatabase { database throws(StoreError) in
            try database.rows("SELECT text FROM notes ORDER BY id") { $0.text(0) }
        }
    }

    /// Adds a note (`now` in Unix seconds).
    public func addNote(_ text: String, now: Int64) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run("INSERT INTO notes (created_at, text) VALUES (?, ?)", now, text)
        }
    }

    /// Forgets every note (the operator has read them).
    public func clearNotes() throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM notes")
        }
    }
}
