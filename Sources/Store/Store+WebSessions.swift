/// A session of the parent's page as stored: the hash of its token, never the token.
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
            try database.run("UPDATE web_sessions SET last_used_at = ? WHERE token_hash = ?", now, tokenHash)
        }
    }

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
