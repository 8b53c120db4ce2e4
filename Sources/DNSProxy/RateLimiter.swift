import DomainMatch
import Locks

/// Per-client token buckets (docs/dns.md#hostile-input): `rate` queries a second with a burst of twice
/// that; beyond it, REFUSED. The table is bounded so a flood of spoofed sources cannot
/// grow memory without bound: when full, idle (refilled) buckets go first, then the
/// oldest.
public final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: Int64
    }

    private struct Table {
        var buckets: [IPAddress: Bucket] = [:]
    }

    public let rate: Double
    public let burst: Double
    /// Per shard: the limiter holds at most 16 times this many clients.
    public let maxClients: Int
    /// Sharded by client so loop threads rarely wait on one another.
    private let shards: [Shard]

    private final class Shard: Sendable {
        let table = Lock(Table())
    }

    /// `rate` 0 turns the limit off.
    public init(rate: Int, maxClients: Int = 65_536) {
        self.rate = Double(rate)
        burst = Double(rate) * 2
        self.maxClients = max(1, maxClients / 16)
        shards = rate > 0 ? (0..<16).map { _ in Shard() } : []
    }

    /// Takes one token for `client` at `now` (monotonic milliseconds); false when empty.
    public func allow(_ client: IPAddress, now: Int64) -> Bool {
        guard rate > 0 else { return true }
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
        let full = burst / rate * 1000
        table.buckets = table.buckets.filter { Double(now - $0.value.updated) < full }
        if table.buckets.count >= maxClients,
            let oldest = table.buckets.min(by: { $0.value.updated < $1.value.updated })
        {
            table.buckets.removeValue(forKey: oldest.key)
        }
    }

    public var trackedClients: Int { shards.reduce(0) { $0 + $1.table.withLock { $0.buckets.count } } }
}
