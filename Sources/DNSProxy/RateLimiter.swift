import DomainMatch
import Locks
import Synchronization

/// Per-client token buckets (docs/dns.md#hostile-input): `rate` queries a second with a burst of twice
/// that; beyond it, REFUSED. The table is bounded so a flood of spoofed sources cannot
/// grow memory without bound: when full, idle (refilled) buckets go first, then the
/// oldest.
///
/// Long-lived: the pipeline owns the one limiter of a run, so a client's budget holds
/// across policy swaps, list updates and reloads; a reload only changes the rate.
public final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Int64
    }

    private struct Table {
        var buckets: [IPAddress: Bucket] = [:]
    }

    /// Queries a second per client; 0 is no limit.
    private let setting: Atomic<Int>
    /// Per shard: the limiter holds at most 16 times this many clients.
    public let maxClients: Int
    /// Sharded by client so loop threads rarely wait on one another.
    private let shards: [Shard]

    private final class Shard: Sendable {
        let table = Lock(Table())
    }

    /// `rate` 0 turns the limit off.
    public init(rate: Int, maxClients: Int = 65_536) {
        setting = Atomic(max(0, rate))
        self.maxClients = max(1, maxClients / 16)
        shards = (0..<16).map { _ in Shard() }
    }

    /// A new rate (a reload): every client keeps its bucket, refilled at the new rate from
    /// now on and capped at the new burst on its next query.
    public func update(rate: Int) { setting.store(max(0, rate), ordering: .relaxed) }

    /// Takes one token for `client` at `now` (monotonic milliseconds); false when empty.
    public func allow(_ client: IPAddress, now: Int64) -> Bool {
        let perSecond = setting.load(ordering: .relaxed)
        guard perSecond > 0 else { return true }
        let rate = Double(perSecond)
        let burst = rate * 2
        return shards[Int(UInt(bitPattern: client.hashValue) % 16)].table.withLock { table in
            var bucket = table.buckets[client] ?? Bucket(tokens: burst, updated: now)
            let elapsed = Double(max(0, now - bucket.updated)) / 1000
            bucket.tokens = min(burst, bucket.tokens + elapsed * rate)
            bucket.updated = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            if table.buckets[client] == nil, table.buckets.count >= maxClients { evict(&table, now: now) }
            table.buckets[client] = bucket
            return allowed
        }
    }

    private func evict(_ table: inout Table, now: Int64) {
        // A bucket refills to its burst (twice the rate) in two seconds.
        let full = 2000.0
        table.buckets = table.buckets.filter { Double(now - $0.value.updated) < full }
        if table.buckets.count >= maxClients,
            let oldest = table.buckets.min(by: { $0.value.updated < $1.value.updated })
        {
            table.buckets.removeValue(forKey: oldest.key)
        }
    }

    public var trackedClients: Int { shards.reduce(0) { $0 + $1.table.withLock { $0.buckets.count } } }
}
