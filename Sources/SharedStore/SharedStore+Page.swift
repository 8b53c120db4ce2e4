import Store

/// The parent's page across gateways (docs/two-gateways.md#what-is-shared): a session
/// opened on one gateway's page opens the others' (a page name that resolves to either
/// gateway keeps the parent logged in), a logout on one ends it on all, and the page's
/// password set on any gateway is the password of all. Read past a mark of their own.
extension SharedStore {
    /// The page's password as its stored hash, and when it was set (Unix seconds).
    public struct PagePassword: Sendable, Equatable {
        public var hash: String
        public var changedAt: Int64

        public init(hash: String, changedAt: Int64) {
            self.hash = hash
            self.changedAt = changedAt
        }
    }

    /// Writes the sessions opened, used or ended here since last written, and `password`
    /// when it was set here; returns the password the shared store keeps instead when a
    /// later one was set on another gateway.
    @discardableResult
    public func pushPage(from store: Store, password: PagePassword?) throws(SharedStoreError) -> PagePassword? {
        let sessions: [WebSessionRow]
        let ended: [(tokenHash: [UInt8], endedAt: Int64)]
        do {
            sessions = try store.unsharedWebSessions()
            ended = try store.endedWebSessions()
        } catch {
            throw .local("\(error)")
        }
        guard !sessions.isEmpty || !ended.isEmpty || password != nil else { return nil }
        var kept: PagePassword?
        try transaction { () throws(SharedStoreError) in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [Self.changesLockKey])
            for session in sessions {
                try connection.execute(
                    """
                    INSERT INTO web_sessions (token_hash, password_tag, csrf_token, address, created_at, last_used_at,
                        gateway, seq)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, nextval('changes'))
                    ON CONFLICT (token_hash) DO UPDATE SET last_used_at = excluded.last_used_at, seq = excluded.seq
                    WHERE web_sessions.ended_at IS NULL AND excluded.last_used_at > web_sessions.last_used_at
                    """,
                    [
                        Self.hex(session.tokenHash), session.passwordTag, session.csrfToken, session.address,
                        "\(session.createdAt)", "\(session.lastUsedAt)", gateway,
                    ])
            }
            for (hash, at) in ended {
                try connection.execute(
                    """
                    UPDATE web_sessions SET ended_at = $2, seq = nextval('changes')
                    WHERE token_hash = $1 AND ended_at IS NULL
                    """, [Self.hex(hash), "\(at)"])
            }
            if let password {
                let taken = try connection.execute(
                    """
                    INSERT INTO web_password (id, hash, changed_at, gateway, seq)
                    VALUES (1, $1, $2, $3, nextval('changes'))
                    ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, changed_at = excluded.changed_at,
                        gateway = excluded.gateway, seq = excluded.seq
                    WHERE (excluded.changed_at, excluded.gateway) >= (web_password.changed_at, web_password.gateway)
                    RETURNING 1
                    """, [password.hash, "\(password.changedAt)", gateway])
                if taken.isEmpty { kept = try passwordRow("TRUE", []).first?.0 }
            }
            try connection.execute("SELECT pg_notify($1, $2)", [Self.channel, gateway])
        }
        do {
            try store.markWebSessionsShared(sessions, ended: ended.map(\.tokenHash))
            if let password { try store.setSharedWebPassword(kept?.hash ?? password.hash) }
        } catch {
            throw .local("\(error)")
        }
        return kept
    }

    /// Reads the sessions and the password changed on any gateway past this store's page
    /// mark, in one snapshot, and takes the sessions; returns the password when it changed
    /// (the caller writes the page's password file).
    public func pullPage(into store: Store) throws(SharedStoreError) -> PagePassword? {
        let mark: Int64
        do { mark = try store.sharedPageState().pulled } catch { throw .local("\(error)") }
        var open: [(WebSessionRow, Int64)] = []
        var ended: [([UInt8], Int64)] = []
        var password: (PagePassword, Int64)?
        try transaction(isolation: "REPEATABLE READ") { () throws(SharedStoreError) in
            for row in try connection.execute(
                """
                SELECT token_hash, password_tag, csrf_token, address, created_at, last_used_at, ended_at, seq
                FROM web_sessions WHERE seq > $1 ORDER BY seq
                """, ["\(mark)"])
            {
                guard let hash = row[0].flatMap(Self.bytes), let tag = row[1], let csrf = row[2], let address = row[3],
                    let created = row[4].flatMap({ Int64($0) }), let used = row[5].flatMap({ Int64($0) }),
                    let seq = row[7].flatMap({ Int64($0) })
                else { throw .malformed("web_sessions", "?") }
                if row[6] != nil {
                    ended.append((hash, seq))
                } else {
                    let session = WebSessionRow(
                        tokenHash: hash, passwordTag: tag, csrfToken: csrf, address: address, createdAt: created,
                        lastUsedAt: used)
                    open.append((session, seq))
                }
            }
            password = try passwordRow("seq > $1", ["\(mark)"]).first
        }
        let numbers = open.map(\.1) + ended.map(\.1) + [password?.1].compactMap { $0 }
        let pulled = max(numbers.max() ?? mark, mark)
        guard pulled > mark else { return nil }
        do {
            try store.mergeSharedWebSessions(open: open.map(\.0), ended: ended.map(\.0), pulled: pulled)
            if let password { try store.setSharedWebPassword(password.0.hash) }
        } catch {
            throw .local("\(error)")
        }
        return password?.0
    }

    /// Forgets sessions ended a day ago or unused for 30 days (no session lives longer),
    /// as each gateway forgets its own.
    public func prunePage(now: Int64) throws(SharedStoreError) {
        try connection.execute(
            "DELETE FROM web_sessions WHERE ended_at < $1 OR last_used_at < $2",
            ["\(now - 86_400)", "\(now - 30 * 86_400)"])
    }

    private func passwordRow(
        _ condition: String, _ parameters: [String?]
    ) throws(SharedStoreError) -> [(PagePassword, Int64)] {
        try connection.execute("SELECT hash, changed_at, seq FROM web_password WHERE \(condition)", parameters).map {
            row throws(SharedStoreError) in
            guard let hash = row[0], let at = row[1].flatMap({ Int64($0) }), let seq = row[2].flatMap({ Int64($0) })
            else { throw .malformed("web_password", "1") }
            return (PagePassword(hash: hash, changedAt: at), seq)
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    /// `hex`'s bytes back, or nil for text that is not an even count of hex digits.
    static func bytes(_ text: String) -> [UInt8]? {
        let values = text.utf8.map { byte -> UInt8? in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        guard values.count % 2 == 0, !values.contains(nil) else { return nil }
        return stride(from: 0, to: values.count, by: 2).map { values[$0]! << 4 | values[$0 + 1]! }
    }
}
