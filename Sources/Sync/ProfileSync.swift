import FoundationEssentials
import Policy
import Store

/// One profile's conversation with the API (docs/sync.md#polling): polls and full fetches on the
/// schedule, validation of what comes back, then apply → persist → report → ack. Runs on
/// the sync thread only.
public final class ProfileSync {
    public let profile: String
    public let childID: String
    private let api: any PhosraAPIClient
    private let store: Store
    private var schedule: SyncSchedule
    private var budget = RequestBudget()
    private var state: SyncState
    /// Publishes a policy's rules to the proxies (built aside, swapped whole);
    /// `.unfiltered` after a 404 with `on_no_policy = allow`.
    private let apply: (PolicyRules) -> Void
    /// The enforcement results of a policy and the rules built from it
    /// (docs/sync.md#enforcement-report), for the report: judged against the lists in force
    /// when it is called, not those of the start.
    private let evaluate: (CompiledPolicy, PolicyRules) -> [EnforcementResult]
    private let keepOnNoPolicy: Bool
    private let log: (String, [(String, String)]) -> Void
    /// A 429 holds every request of this profile (polls, acks, reports) until then
    /// (monotonic milliseconds).
    private var holdUntil: Int64 = 0
    /// Whether this process has said the API has no active policy (said once, not per poll).
    private var announcedNoPolicy = false
    /// Whether this process has published `.unfiltered` for a 404 since the last policy: a
    /// 404 poll that changes nothing publishes nothing, so no client's state or open
    /// tunnel is touched every poll.
    private var publishedUnfiltered = false

    public init(
        profile: String, childID: String, api: any PhosraAPIClient, store: Store, timing: SyncSchedule.Timing,
        now: SyncTime, keepOnNoPolicy: Bool, apply: @escaping (PolicyRules) -> Void,
        evaluate: @escaping (CompiledPolicy, PolicyRules) -> [EnforcementResult],
        log: @escaping (String, [(String, String)]) -> Void
    ) throws(StoreError) {
        self.profile = profile
        self.childID = childID
        self.api = api
        self.store = store
        self.apply = apply
        self.evaluate = evaluate
        self.keepOnNoPolicy = keepOnNoPolicy
        self.log = log
        state = try store.syncState(profile: profile) ?? SyncState(profile: profile)
        // The store keeps the start of a run of 401s as a wall-clock time (it outlives
        // the process); the schedule counts `revoke_after` from it on the monotonic clock.
        schedule = SyncSchedule(
            timing: timing, now: now.monotonic,
            unauthorizedSince: state.unauthorizedSince.map { now.monotonic(atWall: $0 * 1000) })
    }

    /// When the next request can go (monotonic milliseconds): due by the schedule, and
    /// within the request budget and any `Retry-After` hold, so the sync thread sleeps
    /// until then.
    public func nextDue(now: SyncTime) -> Int64 {
        max(schedule.next().at, budget.availableAt(now.monotonic), holdUntil)
    }

    public var appliedVersion: Int { state.appliedVersion }

    /// Makes the next request if it is due (or `force`, for SIGUSR1 and `sync`); returns
    /// whether the API answered.
    @discardableResult
    public func step(now: SyncTime, force: Bool = false) -> Bool {
        let (request, due) = schedule.next()
        guard force || due <= now.monotonic else { return true }
        guard spend(now) else { return true }
        let fetch = api.fetchPolicy(
            sinceVersion: request == .full || state.appliedVersion == 0 ? nil : state.appliedVersion)
        let outcome = handle(fetch, request: request, now: now)
        schedule.record(outcome, for: request, now: now.monotonic, random: Double.random(in: 0..<1))
        state.lastSyncAt = now.wallSeconds
        state.unauthorizedSince = schedule.unauthorizedSince.map { now.wall(atMonotonic: $0) / 1000 }
        state.revoked = schedule.isRevoked(now: now.monotonic)
        state.nextFullSyncAt = now.wall(atMonotonic: schedule.nextFullAt) / 1000
        switch outcome {
        case .applied, .notModified, .noPolicy, .invalid:
            retryUnconfirmed(now: now)
            persist()
            return true
        default:
            persist()
            return false
        }
    }

    /// An `enforcement_status` report or an ack that did not get through is sent again
    /// once the API answers, also after a restart (the versions are in the store).
    private func retryUnconfirmed(now: SyncTime) {
        let version = state.appliedVersion
        guard version > 0, state.reportedVersion < version || state.ackedVersion < version else { return }
        if state.reportedVersion < version,
            let stored = try? store.policy(profile: profile), stored.version == version,
            let policy = try? CompiledPolicy.decode(stored.json),
            sendReport(
                ReportPayloads.enforcementStatus(
                    version: version, results: evaluate(policy, PolicyRules(policy)), at: now.wallSeconds),
                now: now)
        {
            state.reportedVersion = version
        }
        if state.ackedVersion < version, spend(now), api.ack(version: version) == .accepted {
            state.ackedVersion = version
        }
    }

    /// A 429 from any request: hold this profile's requests for `Retry-After`.
    public func rateLimited(retryAfter seconds: Int64, now: SyncTime) {
        holdUntil = max(holdUntil, now.monotonic + max(1, seconds) * 1000)
    }

    private func handle(_ fetch: PolicyFetch, request: SyncSchedule.Request, now: SyncTime) -> SyncSchedule.Outcome {
        switch fetch {
        case .policy(let bytes):
            succeeded(now)
            return receive(bytes, now: now)
        case .notModified:
            succeeded(now)
            state.noActivePolicy = false
            state.noPolicyUnfiltered = false
            return .notModified
        case .noPolicy:
            succeeded(now)
            if !announcedNoPolicy { log("no_active_policy", [("profile", profile), ("keeping", "\(keepOnNoPolicy)")]) }
            announcedNoPolicy = true
            state.noActivePolicy = true
            state.noPolicyUnfiltered = !keepOnNoPolicy
            if !keepOnNoPolicy, !publishedUnfiltered {
                apply(.unfiltered)
                publishedUnfiltered = true
            }
            return .noPolicy
        case .unauthorized:
            failed("401: the API did not accept the device key", now)
            return .unauthorized
        case .rateLimited(let seconds):
            failed("429: rate limited, retrying after \(seconds) s", now)
            rateLimited(retryAfter: seconds, now: now)
            return .rateLimited(retryAfterSeconds: seconds)
        case .failed(let why):
            failed(why, now)
            return .failed
        }
    }

    /// A 200: validate, and only then build aside, swap, persist, report and ack.
    private func receive(_ bytes: [UInt8], now: SyncTime) -> SyncSchedule.Outcome {
        state.noActivePolicy = false
        state.noPolicyUnfiltered = false
        announcedNoPolicy = false
        let policy: CompiledPolicy
        do {
            policy = try CompiledPolicy.decode(bytes)
        } catch {
            return reject("the policy does not decode: \(error)", version: 0, now: now)
        }
        guard policy.version >= 1 else {
            return reject("version \(policy.version) is not ≥ 1", version: policy.version, now: now)
        }
        guard policy.childID == childID else {
            return reject(
                "the policy is for child \(policy.childID), not \(childID)", version: policy.version, now: now)
        }
        if policy.version == state.appliedVersion && policy.policyID == state.policyID { return .notModified }
        let rules = PolicyRules(policy)
        apply(rules)
        publishedUnfiltered = false
        let results = evaluate(policy, rules)
        state.appliedVersion = policy.version
        state.policyID = policy.policyID
        do {
            try store.savePolicy(
                CachedPolicy(
                    profile: profile, json: bytes, version: policy.version,
                    policyID: policy.policyID, fetchedAt: now.wallSeconds))
        } catch {
            log("store_failed", [("profile", profile), ("error", "\(error)")])
        }
        log("policy_applied", [("profile", profile), ("version", "\(policy.version)"), ("policy_id", policy.policyID)])
        if sendReport(
            ReportPayloads.enforcementStatus(version: policy.version, results: results, at: now.wallSeconds), now: now)
        {
            state.reportedVersion = policy.version
        }
        if spend(now), case .accepted = api.ack(version: policy.version) { state.ackedVersion = policy.version }
        return .applied
    }

    /// An invalid 200 keeps the last good policy and is reported `failed` (docs/sync.md#polling).
    private func reject(_ reason: String, version: Int, now: SyncTime) -> SyncSchedule.Outcome {
        log("policy_rejected", [("profile", profile), ("error", reason)])
        state.lastError = "policy rejected: \(reason)"
        state.lastErrorAt = now.wallSeconds
        let results = EnforcementReport.rejected(reason: reason, keeping: state.appliedVersion)
        sendReport(ReportPayloads.enforcementStatus(version: version, results: results, at: now.wallSeconds), now: now)
        return .invalid
    }

    @discardableResult
    private func sendReport(_ body: [UInt8], now: SyncTime) -> Bool {
        guard spend(now) else { return false }
        let result = api.report(body)
        if result != .accepted { log("report_failed", [("profile", profile), ("result", "\(result)")]) }
        return result == .accepted
    }

    /// One request from the budget, or false when it is spent or a 429 holds it.
    private func spend(_ now: SyncTime) -> Bool {
        let instant = now.monotonic
        guard instant >= holdUntil, budget.availableAt(instant) <= instant else { return false }
        budget.spend(instant)
        return true
    }

    private func succeeded(_ now: SyncTime) {
        state.lastSuccessAt = now.wallSeconds
        state.lastError = nil
        state.lastErrorAt = nil
    }

    private func failed(_ why: String, _ now: SyncTime) {
        if state.lastError != why { log("sync_failed", [("profile", profile), ("error", why)]) }
        state.lastError = why
        state.lastErrorAt = now.wallSeconds
    }

    private func persist() {
        do { try store.saveSyncState(state) } catch {
            log("store_failed", [("profile", profile), ("error", "\(error)")])
        }
    }

    /// Uses the shared budget for the hit reporter (polls, acks and reports together stay
    /// under 20 a minute per profile).
    public func spendForReport(_ now: SyncTime) -> Bool { spend(now) }

    /// Sends a report body on this profile's budget.
    public func send(_ body: [UInt8]) -> APIResult { api.report(body) }

    /// What a queued report's sender does next.
    public enum Delivery: Equatable {
        /// 202: mark it sent.
        case accepted
        /// 400: the server will never take this body; set it aside and go on.
        case rejected(String)
        /// 429 (the profile is now held for `Retry-After`), 401 or no answer: stop this round.
        case stop
    }

    /// Sends one queued report and says what to do with it; a 429 holds the profile.
    public func deliver(_ body: [UInt8], now: SyncTime) -> Delivery {
        switch send(body) {
        case .accepted: return .accepted
        case .rejected(let why): return .rejected(why)
        case .rateLimited(let seconds):
            rateLimited(retryAfter: seconds, now: now)
            return .stop
        case .unauthorized, .failed: return .stop
        }
    }
}

/// What a 404 from the API ("no active policy") means for a profile (`on_no_policy`).
public enum NoPolicyAction: String, CaseIterable, Sendable {
    /// Keep enforcing the cached policy.
    case keep
    /// Go unfiltered, as profile `none`.
    case allow
}
