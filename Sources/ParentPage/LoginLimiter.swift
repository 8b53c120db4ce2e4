/// Failed logins per client address, never for everyone: one address guessing is locked
/// out, the parent's phone is not. Not per MAC address: every device behind a Wi-Fi
/// extender that bridges by rewriting MACs would share the extender's, and one child's
/// guesses would lock the parent's phone. Five failures lock the address for 15 minutes;
/// each lockout after that doubles (30, 60, … at most a day) until a login succeeds or a
/// day passes without a failure. Bounded: at most `capacity` addresses are remembered, the
/// oldest forgotten first (one that is forgotten starts again at zero, after having waited).
struct LoginLimiter {
    static let failuresBeforeLock = 5
    static let firstLock: Int64 = 15 * 60
    static let longestLock: Int64 = 86_400
    static let forgetAfter: Int64 = 86_400

    private struct Entry {
        var failures = 0
        var lockouts = 0
        var lockedUntil: Int64 = 0
        var lastFailure: Int64 = 0
    }

    let capacity: Int
    private var entries: [String: Entry] = [:]

    init(capacity: Int = 4096) { self.capacity = capacity }

    /// Seconds `client` must still wait, or nil when it may try.
    func retryAfter(_ client: String, now: Int64) -> Int64? {
        guard let entry = entries[client], entry.lockedUntil > now else { return nil }
        return entry.lockedUntil - now
    }

    /// A wrong password from `client`: returns the lock it now has, if any.
    mutating func failed(_ client: String, now: Int64) -> Int64? {
        if entries[client] == nil, entries.count >= capacity { forgetOldest() }
        var entry = entries[client] ?? Entry()
        if now - entry.lastFailure > Self.forgetAfter { entry = Entry() }
        entry.failures += 1
        entry.lastFailure = now
        var lock: Int64?
        if entry.failures >= Self.failuresBeforeLock {
            let seconds = min(Self.firstLock << Int64(min(entry.lockouts, 20)), Self.longestLock)
            entry.lockedUntil = now + seconds
            entry.lockouts += 1
            entry.failures = 0
            lock = seconds
        }
        entries[client] = entry
        return lock
    }

    /// A right password: the client starts again at zero.
    mutating func succeeded(_ client: String) { entries[client] = nil }

    private mutating func forgetOldest() {
        guard let oldest = entries.min(by: { $0.value.lastFailure < $1.value.lastFailure })?.key else { return }
        entries[oldest] = nil
    }
}
