import Base64
import Passwords
import Store

/// Sessions of the page: a 256-bit random token in a cookie (`HttpOnly; Secure;
/// SameSite=Strict`), kept in the store only as its SHA-256, so a copy of the database
/// opens nothing. A session ends after 12 hours unused, 30 days after login, at logout,
/// and when the password changes (its tag no longer matches).
struct Sessions {
    static let cookieName = "pg_session"
    static let idleSeconds: Int64 = 12 * 3_600
    static let maxAgeSeconds: Int64 = 30 * 86_400

    let store: Store

    struct Session {
        let tokenHash: [UInt8]
        let csrfToken: String
    }

    /// Opens a session for `address`; returns the cookie's token and the CSRF token.
    func open(address: String, passwordTag: String, now: Int64) throws -> (token: String, csrf: String) {
        let token = Base64.encode(try Crypto.randomBytes(32), padded: false).urlSafe
        let csrf = Base64.encode(try Crypto.randomBytes(32), padded: false).urlSafe
        try store.addWebSession(
            WebSessionRow(
                tokenHash: Crypto.sha256(Array(token.utf8)), passwordTag: passwordTag, csrfToken: csrf,
                address: address, createdAt: now, lastUsedAt: now))
        return (token, csrf)
    }

    /// The live session of `token`, touched; nil when it is unknown, idle too long, too
    /// old, or of another password (then it is removed).
    func find(token: String, passwordTag: String, now: Int64) throws -> Session? {
        let hash = Crypto.sha256(Array(token.utf8))
        guard let row = try store.webSession(tokenHash: hash) else { return nil }
        guard row.passwordTag == passwordTag, now - row.lastUsedAt < Self.idleSeconds,
            now - row.createdAt < Self.maxAgeSeconds
        else {
            try store.removeWebSession(tokenHash: hash)
            return nil
        }
        // One write a minute at most per session: the idle clock does not need seconds.
        if now - row.lastUsedAt >= 60 { try store.touchWebSession(tokenHash: hash, at: now) }
        return Session(tokenHash: hash, csrfToken: row.csrfToken)
    }

    /// The parent logged out: ended here and, with a shared store, on every gateway.
    func close(_ session: Session, now: Int64) throws { try store.endWebSession(tokenHash: session.tokenHash, at: now) }

    /// `Set-Cookie` for a new session, and for ending one.
    static func cookie(_ token: String) -> String {
        "\(cookieName)=\(token); Path=/; Max-Age=\(maxAgeSeconds); HttpOnly; Secure; SameSite=Strict"
    }

    static let expiredCookie = "\(cookieName)=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict"
}

extension String {
    /// Base64 as URL-safe text (RFC 4648 §5): safe in a cookie and a header.
    var urlSafe: String {
        String(
            unicodeScalars.map { scalar -> Character in
                switch scalar {
                case "+": "-"
                case "/": "_"
                default: Character(scalar)
                }
            })
    }
}
