import Store

/// Sends a profile's queued hits as `blocked_attempt` batches (docs/sync.md#hits): several back to
/// back while the queue is long, at most 10 requests a minute, within the profile's overall
/// budget. At least once: a batch keeps its `batch_id` until a 202 deletes its rows; a 400
/// moves it to the dead-letter table; anything else leaves it for the next round.
public struct HitReporter {
    private var budget = RequestBudget(limit: 10)
    public init() {}

    /// Returns how many batches were delivered.
    @discardableResult
    public mutating func send(
        for sync: ProfileSync, store: Store, now: SyncTime,
        log: (String, [(String, String)]) -> Void
    ) -> Int {
        var delivered = 0
        while budget.availableAt(now.monotonic) <= now.monotonic {
            guard let batch = try? store.nextBatch(profile: sync.profile, now: now.wallSeconds) else { break }
            guard sync.spendForReport(now) else { break }
            budget.spend(now.monotonic)
            let events = batch.events.map { row in
                ReportPayloads.BlockedEvent(
                    domain: row.domain, matched: row.matched, reason: row.reason, category: row.category,
                    client: row.client, source: row.source, count: row.count,
                    firstSeen: row.firstSeen, lastSeen: row.lastSeen, names: row.names)
            }
            let body = ReportPayloads.blockedAttempt(
                batchID: batch.id, version: batch.policyVersion,
                windowStart: batch.windowStart, windowEnd: batch.windowEnd,
                events: events, merged: batch.mergedEvents, at: now.wallSeconds)
            switch sync.deliver(body, now: now) {
            case .accepted:
                _ = try? store.completeBatch(id: batch.id)
                delivered += 1
            case .rejected(let why):
                _ = try? store.deadLetter(batchID: batch.id, reason: why, now: now.wallSeconds)
                log("hits_dead_lettered", [("profile", sync.profile), ("batch_id", batch.id), ("error", why)])
            case .stop:
                return delivered
            }
        }
        return delivered
    }
}
