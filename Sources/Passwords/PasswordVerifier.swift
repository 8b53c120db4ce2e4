import Locks
import Synchronization

/// Verifies proxy credentials and remembers the ones that matched, so that a browser
/// opening connection after connection with the same `Proxy-Authorization` pays scrypt
/// once, not per connection. Shared by every loop thread; `Sendable`.
///
/// The memory holds no password: each success is kept as an HMAC-SHA-256, under a key
/// drawn at random when the verifier is made, of the user, the password and the stored
/// value. A changed `proxy_password` is therefore a different entry (the old one ages
/// out), and a lookup's timing says nothing about the password (the key is secret).
/// Failures are not remembered: `AuthFailureLimiter` (ProxyCore) bounds how often a
/// client may make one.
public final class PasswordVerifier: Sendable {
    private struct Cache {
        var entries: Set<[UInt8]> = []
        /// Insertion order, as a ring: when full, the oldest success is forgotten.
        var ring: [[UInt8]] = []
        var next = 0
    }

    public let capacity: Int
    /// Nil when OpenSSL could not draw a key: then nothing is cached and every
    /// verification runs in full (slower, never wrong).
    private let key: [UInt8]?
    private let cache = Lock(Cache())
    /// How many verifications ran in full (scrypt or the plain comparison): what the cache saves.
    let fullVerifications = Atomic<Int>(0)

    /// `capacity`: how many successes are remembered (at least 1); 32 bytes each.
    public init(capacity: Int = 1024) {
        self.capacity = max(1, capacity)
        key = try? Crypto.randomBytes(32)
    }

    /// Whether `password` is `stored`'s, for `user` (the proxy user the caller found
    /// `stored` under). Runs scrypt unless this (user, password, stored) matched before.
    /// Blocks the calling thread for scrypt's duration; takes the lock only to look up and
    /// to record, never while hashing.
    public func verify(user: String, password: [UInt8], against stored: StoredPassword) -> Bool {
        guard !password.isEmpty else { return false }  // a stored password is never empty
        let entry = key.map { Crypto.hmacSHA256(key: $0, Self.message(user, password, stored)) }
        if let entry, cache.withLock({ $0.entries.contains(entry) }) { return true }
        fullVerifications.add(1, ordering: .relaxed)
        guard stored.matches(password) else { return false }
        if let entry { remember(entry) }
        return true
    }

    /// Whether this (user, password, stored) matched before and is still remembered: a
    /// keyed hash and a set lookup, no scrypt. False means "run `verify`", not "wrong".
    public func isRemembered(user: String, password: [UInt8], against stored: StoredPassword) -> Bool {
        guard !password.isEmpty, let key else { return false }
        let entry = Crypto.hmacSHA256(key: key, Self.message(user, password, stored))
        return cache.withLock { $0.entries.contains(entry) }
    }

    /// How many successes are remembered now.
    public var cachedCount: Int { cache.withLock { $0.entries.count } }

    private func remember(_ entry: [UInt8]) {
        let capacity = capacity
        cache.withLock { cache in
            guard cache.entries.insert(entry).inserted else { return }
            if cache.ring.count < capacity {
                cache.ring.append(entry)
            } else {
                cache.entries.remove(cache.ring[cache.next])
                cache.ring[cache.next] = entry
                cache.next = (cache.next + 1) % capacity
            }
        }
    }

    /// Each part prefixed with its length, so that no two triples give the same message.
    private static func message(_ user: String, _ password: [UInt8], _ stored: StoredPassword) -> [UInt8] {
        var message: [UInt8] = []
        for part in [Array(user.utf8), password, stored.identity] {
            withUnsafeBytes(of: UInt64(part.count).littleEndian) { message.append(contentsOf: $0) }
            message.append(contentsOf: part)
        }
        return message
    }
}
