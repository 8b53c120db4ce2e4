/// When a profile talks to the API next (docs/sync.md#polling), worked out without I/O: the
/// sync thread asks, waits, makes the request and tells the outcome back. All times are
/// milliseconds on the monotonic clock (`SyncTime.monotonic`), never the wall clock, so
/// that a step of the wall clock moves no request.
public struct SyncSchedule: Sendable {
    public struct Timing: Sendable {
        public var pollInterval: Int64 = 120_000
        public var fullSyncInterval: Int64 = 6 * 3_600_000
        public var revokeAfter: Int64 = 30 * 60_000
        public var backoffMax: Int64 = 5 * 60_000
        public init() {}
    }

    public enum Request: Equatable, Sendable {
        /// `GET /device/policy` without `since_version`, comparing `policy_id` and version.
        case full
        /// `GET /device/policy?since_version=V`.
        case poll
    }

    public enum Outcome: Equatable, Sendable {
        case applied
        case notModified
        case noPolicy
        case invalid
        case unauthorized
        case rateLimited(retryAfterSeconds: Int64)
        /// A network error or a 5xx.
        case failed
    }

    public let timing: Timing
    public private(set) var nextFullAt: Int64
    public private(set) var nextPollAt: Int64
    /// Set by failures: nothing before this instant.
    public private(set) var holdUntil: Int64 = 0
    public private(set) var failures = 0
    /// The first 401 of an unbroken run of them.
    public private(set) var unauthorizedSince: Int64?

    /// A fresh schedule: an unconditional fetch at once (start-up), then polls.
    public init(timing: Timing, now: Int64, unauthorizedSince: Int64? = nil) {
        self.timing = timing
        nextFullAt = now
        nextPollAt = now + timing.pollInterval
        self.unauthorizedSince = unauthorizedSince
    }

    /// What to do next and when.
    public func next() -> (request: Request, at: Int64) {
        let request: Request = nextFullAt <= nextPollAt ? .full : .poll
        return (request, max(request == .full ? nextFullAt : nextPollAt, holdUntil))
    }

    /// Whether 401s have lasted `revoke_after`: only then is the profile shown revoked
    /// (a single 401 may be a transient database error on the server, docs/sync.md).
    public func isRevoked(now: Int64) -> Bool {
        guard let since = unauthorizedSince else { return false }
        return now - since >= timing.revokeAfter
    }

    /// Records what `request` gave at `now`; `random` in 0..<1 spreads polls (±10 %) and
    /// backoffs (jitter) so a home's gateways do not hit the API in step.
    public mutating func record(_ outcome: Outcome, for request: Request, now: Int64, random: Double) {
        let jitteredPoll = timing.pollInterval + Int64((random * 0.2 - 0.1) * Double(timing.pollInterval))
        switch outcome {
        case .applied, .notModified, .noPolicy, .invalid:
            failures = 0
            holdUntil = 0
            unauthorizedSince = nil
            nextPollAt = now + jitteredPoll
            if request == .full { nextFullAt = now + timing.fullSyncInterval }
        case .unauthorized:
            if unauthorizedSince == nil { unauthorizedSince = now }
            backOff(now: now, random: random)
        case .rateLimited(let seconds):
            holdUntil = now + max(1, seconds) * 1000
        case .failed:
            backOff(now: now, random: random)
        }
    }

    /// Exponential backoff from 2 s, with up to 50 % jitter, capped at `backoff_max`.
    private mutating func backOff(now: Int64, random: Double) {
        failures += 1
        let base = min(timing.backoffMax, 2000 << min(Int64(failures - 1), 20))
        let delay = min(timing.backoffMax, base / 2 + Int64(random * Double(base / 2)))
        holdUntil = now + max(delay, 1)
    }
}

/// At most `limit` requests in any `window` (docs/sync.md#when-the-api-misbehaves: a profile's polls, acks and
/// reports together stay under 20 a minute; the API allows 100 per home).
public struct RequestBudget: Sendable {
    public let limit: Int
    public let window: Int64
    private var sent: [Int64] = []

    public init(limit: Int = 20, window: Int64 = 60_000) {
        self.limit = limit
        self.window = window
    }

    /// The earliest instant ≥ `now` at which one more request fits.
    public func availableAt(_ now: Int64) -> Int64 {
        let recent = sent.filter { now - $0 < window }
        guard recent.count >= limit else { return now }
        return recent[recent.count - limit] + window
    }

    public mutating func spend(_ now: Int64) {
        sent = sent.filter { now - $0 < window } + [now]
    }
}
