/// Password checks per proxy user, from any address (docs/proxy.md#proxy-authentication),
/// for devices that have not logged in as that user before: the first `freeChecks` go
/// ahead as they come. From then on each check for the user waits for a turn, and each
/// turn comes later than the one before: the first `firstDelay` after the last free
/// check, each next one twice as long after the one before, at most `maxDelay`. A check
/// whose turn is more than `maxWait` away is refused (`429`) without taking one. A user's
/// count is forgotten after `quiet` without a check.
///
/// Checks are counted when they start, not when they fail: guesses sent at once from two
/// hundred addresses cannot all pass before the first has failed. Guessing a user's
/// password from two hundred addresses is then as slow as from one: `freeChecks` guesses,
/// then turns 1, 3, 7, 15, 31 and 63 s later, then one a `maxDelay`. Users are kept by the
/// hash of their name (the process's random seed: no one can aim collisions), at most
/// `capacity`; a full table drops first the quietest of those not yet waiting for turns.
public struct UserLoginDelays: Sendable {
    private struct Entry {
        var checks: Int
        var lastCheck: UInt64
        /// Between the turn last taken and the next.
        var delay: UInt64
        /// The next turn: no check past `freeChecks` starts before it.
        var nextTurn: UInt64
    }

    public let freeChecks: Int
    public let firstDelay: UInt64
    public let maxDelay: UInt64
    public let maxWait: UInt64
    public let quiet: UInt64
    public let capacity: Int
    private var users: [Int: Entry] = [:]

    public init(
        freeChecks: Int = 10, firstDelay: UInt64 = 1_000_000_000, maxDelay: UInt64 = 60_000_000_000,
        maxWait: UInt64 = 8_000_000_000, quiet: UInt64 = 900_000_000_000, capacity: Int = 1024
    ) {
        self.freeChecks = max(1, freeChecks)
        self.firstDelay = max(1, firstDelay)
        self.maxDelay = max(self.firstDelay, maxDelay)
        self.maxWait = maxWait
        self.quiet = quiet
        self.capacity = max(1, capacity)
    }

    /// When a check of a password for `user` at `now` may start: at once, after a delay
    /// (the turn is taken), or not within `maxWait` (refused, with the time to its turn).
    mutating func turn(for user: String, now: UInt64) -> AuthFailureLimiter.Verdict {
        let key = user.hashValue
        var entry = users[key].flatMap { isCounting($0, now: now) ? $0 : nil }
        if entry == nil {
            if users[key] == nil, users.count >= capacity, let dropped = leastUseful() { users[dropped] = nil }
            entry = Entry(checks: 0, lastCheck: now, delay: 0, nextTurn: 0)
        }
        defer { users[key] = entry }
        entry!.lastCheck = max(entry!.lastCheck, now)
        if entry!.checks < freeChecks {
            entry!.checks += 1
            if entry!.checks == freeChecks {
                entry!.delay = firstDelay
                entry!.nextTurn = now &+ firstDelay
            }
            return .allowed
        }
        let turn = max(now, entry!.nextTurn)
        let wait = turn - now
        guard wait <= maxWait else { return .tooMany(retryAfter: wait) }
        entry!.checks += 1
        entry!.delay = min(entry!.delay &* 2, maxDelay)
        entry!.nextTurn = turn &+ entry!.delay
        return wait == 0 ? .allowed : .delayed(by: wait)
    }

    /// The entry a full table drops: the quietest of those still within their free checks,
    /// else the quietest. Names made up by the thousand, one check each, then cannot push
    /// out a user whose turns are running: each would have to use up its free checks first.
    private func leastUseful() -> Int? {
        let free = users.filter { $0.value.checks < freeChecks }
        let pool = free.isEmpty ? users : free
        return pool.min(by: { $0.value.lastCheck < $1.value.lastCheck })?.key
    }

    private func isCounting(_ entry: Entry, now: UInt64) -> Bool {
        now < entry.lastCheck || now - entry.lastCheck < quiet
    }
}

/// The devices that have logged in as each proxy user (docs/proxy.md#proxy-authentication),
/// for `lifetime` after their last success: they skip the per-user and /64 limits. At most
/// `capacity` pairs; a full table drops the pair whose success is oldest.
public struct KnownLoginDevices: Sendable {
    private struct Pair: Hashable {
        let user: Int
        let device: LoginDevice
    }

    public let lifetime: UInt64
    public let capacity: Int
    private var pairs: [Pair: UInt64] = [:]

    public init(lifetime: UInt64 = 7 * 86_400_000_000_000, capacity: Int = 4096) {
        self.lifetime = lifetime
        self.capacity = max(1, capacity)
    }

    func contains(user: String, device: LoginDevice, now: UInt64) -> Bool {
        guard let since = pairs[Pair(user: user.hashValue, device: device)] else { return false }
        return now < since || now - since < lifetime
    }

    mutating func insert(user: String, device: LoginDevice, now: UInt64) {
        let pair = Pair(user: user.hashValue, device: device)
        if pairs[pair] == nil, pairs.count >= capacity, let oldest = pairs.min(by: { $0.value < $1.value }) {
            pairs[oldest.key] = nil
        }
        pairs[pair] = now
    }
}
