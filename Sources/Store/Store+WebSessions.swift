/// A session of the parent's page as stored: the hash of its token, never the token.
/// With a shared store (docs/two-gateways.md) a session opened on one gateway's page opens
/// the others' too, and a logout on one ends it on all.
public struct WebSessionRow: Sendable, Equatable {
    public var tokenHash: [UInt8]
    /// Which password it was opened with (a tag of the stored hash): another one ends it.
    public var passwordTag: String
    public var csrfToken: String
    /// The client address that logged in.
    public var address: String
    /// Unix seconds.
    public var createdAt: Int64
    public var lastUsedAt: Int64

    public init(
        tokenHash: [UInt8], passwordTag: String, csrfToken: String, address: String, createdAt: Int64,
        lastUsedAt: Int64
    ) {
        self.tokenHash = tokenHash
        self.passwordTag = passwordTag
        self.csrfToken = csrfToken
        self.address = address
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

extension Store {
    public func addWebSession(_ session: WebSessionRow) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                """
                INSERT INTO web_sessions (token_hash, password_tag, csrf_token, address, created_at, last_used_at)
                VALUES (?, ?, ?, ?, ?, ?)
                """, session.tokenHash, session.passwordTag, session.csrfToken, session.address, session.createdAt,
                session.lastUsedAt)
        }
    }

    /// The session whose token hashes to `tokenHash`, or nil.
    public func webSession(tokenHash: [UInt8]) throws(StoreError) -> WebSessionRow? {
        try withDatabase { database throws(StoreError) in
            try database.firstRow(
                """
                SELECT token_hash, password_tag, csrf_token, address, created_at, last_used_at
                FROM web_sessions WHERE token_hash = ?
                """, tokenHash
            ) { row in
                WebSessionRow(
                    tokenHash: row.blob(0), passwordTag: row.text(1), csrfToken: row.text(2), address: row.text(3),
                    createdAt: row.int64(4), lastUsedAt: row.int64(5))
            }
        }
    }

    public func touchWebSession(tokenHash: [UInt8], at now: Int64) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                "UPDATE web_sessions SET last_used_at = ?, shared = 0 WHERE token_hash = ?", now, tokenHash)
        }
    }

    /// Ends a session at the parent's logout: gone here, and to be ended on every gateway
    /// that shares this one's state.
    public func endWebSession(tokenHash: [UInt8], at now: Int64) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM web_sessions WHERE token_hash = ?", tokenHash)
            try database.run(
                "INSERT OR REPLACE INTO web_sessions_ended (token_hash, ended_at) VALUES (?, ?)", tokenHash, now)
        }
    }

    /// Forgets a session here only: one that expired or belongs to another password, which
    /// every gateway finds so by itself.
    public func removeWebSession(tokenHash: [UInt8]) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM web_sessions WHERE token_hash = ?", tokenHash)
        }
    }

    /// Removes sessions unused since `idleBefore` or opened before `createdBefore`; returns how many.
    @discardableResult
    public func pruneWebSessions(idleBefore: Int64, createdBefore: Int64) throws(StoreError) -> Int {
        try write { database throws(StoreError) in
            try database.run(
                "DELETE FROM web_sessions WHERE last_used_at < ? OR created_at < ?", idleBefore, createdBefore)
            return database.changes
        }
    }

    /// Ends every session (a logout everywhere); returns how many.
    @discardableResult
    public func removeAllWebSessions() throws(StoreError) -> Int {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM web_sessions")
            return database.changes
        }
    }
}

/// The sessions and password of the page between this store and the shared one.
extension Store {
    static let webSessionColumns = "token_hash, password_tag, csrf_token, address, created_at, last_used_at"

    static func webSession(_ row: Row) -> WebSessionRow {
        WebSessionRow(
            tokenHash: row.blob(0), passwordTag: row.text(1), csrfToken: row.text(2), address: row.text(3),
            createdAt: row.int64(4), lastUsedAt: row.int64(5))
    }

    /// Sessions opened or used here since they were last written to the shared store.
    public func unsharedWebSessions() throws(StoreError) -> [WebSessionRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                "SELECT \(Self.webSessionColumns) FROM web_sessions WHERE shared = 0 ORDER BY created_at",
                make: Self.webSession)
        }
    }

    /// Sessions ended here that are still to be ended in the shared store: their hashes and when.
    public func endedWebSessions() throws(StoreError) -> [(tokenHash: [UInt8], endedAt: Int64)] {
        try withDatabase { database throws(StoreError) in
            try database.rows("SELECT token_hash, ended_at FROM web_sessions_ended ORDER BY ended_at") { row in
                (row.blob(0), row.int64(1))
            }
        }
    }

    /// The shared store has `sessions` as they were read, and has ended `ended` (a session
    /// used here again meanwhile stays to be written).
    public func markWebSessionsShared(_ sessions: [WebSessionRow], ended: [[UInt8]]) throws(StoreError) {
        try write { database throws(StoreError) in
            for session in sessions {
                try database.run(
                    "UPDATE web_sessions SET shared = 1 WHERE token_hash = ? AND last_used_at = ?", session.tokenHash,
                    session.lastUsedAt)
            }
            for hash in ended { try database.run("DELETE FROM web_sessions_ended WHERE token_hash = ?", hash) }
        }
    }

    /// Takes sessions from the shared store: each open one kept (its latest use wins)
    /// unless the parent logged out of it here meanwhile, each ended one gone; then the
    /// read mark moves to `pulled`.
    public func mergeSharedWebSessions(
        open: [WebSessionRow], ended: [[UInt8]], pulled: Int64
    ) throws(StoreError) {
        try write { database throws(StoreError) in
            for session in open {
                try database.run(
                    """
                    INSERT INTO web_sessions (\(Self.webSessionColumns), shared)
                    SELECT ?1, ?2, ?3, ?4, ?5, ?6, 1
                    WHERE NOT EXISTS (SELECT 1 FROM web_sessions_ended WHERE token_hash = ?1)
                    ON CONFLICT (token_hash) DO UPDATE SET last_used_at = max(last_used_at, excluded.last_used_at)
                    """, session.tokenHash, session.passwordTag, session.csrfToken, session.address, session.createdAt,
                    session.lastUsedAt)
            }
            for hash in ended { try database.run("DELETE FROM web_sessions WHERE token_hash = ?", hash) }
            try database.run(
                """
                INSERT INTO shared_state (id, page_pulled) VALUES (1, ?)
                ON CONFLICT (id) DO UPDATE SET page_pulled = max(page_pulled, excluded.page_pulled)
                """, pulled)
        }
    }

    /// How far the page's sessions and password have been read from the shared store, and
    /// the password's hash as last agreed with it (nil: none yet).
    public func sharedPageState() throws(StoreError) -> (pulled: Int64, password: String?) {
        try withDatabase { database throws(StoreError) in
            try database.firstRow("SELECT page_pulled, web_password FROM shared_state WHERE id = 1") { row in
                (row.int64(0), row.optionalText(1))
            } ?? (0, nil)
        }
    }

    /// The password's hash now agreed with the shared store.
    public func setSharedWebPassword(_ hash: String) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                """
                INSERT INTO shared_state (id, web_password) VALUES (1, ?)
                ON CONFLICT (id) DO UPDATE SET web_password = excluded.web_password
                """, hash)
        }
    }
}
