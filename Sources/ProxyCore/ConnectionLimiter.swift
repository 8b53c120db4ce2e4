import DomainMatch
import Synchronization

/// Open proxy connections per client address, across every loop (docs/proxy.md#who-is-served:
/// `proxy_max_conns_per_client`). With `SO_REUSEPORT` one client's connections land on
/// several loops, so the count is shared: sharded locks, taken once per accept and once
/// per close.
public final class ConnectionLimiter: Sendable {
    private final class Shard: Sendable {
        let counts = Mutex<[IPAddress: Int]>([:])
    }

    private let shards = (0..<16).map { _ in Shard() }

    public init() {}

    /// Counts one more connection of `client`, unless it already has `limit` (0 = no limit).
    /// - Returns: false, counting nothing, when the client is at its limit.
    public func acquire(_ client: IPAddress, limit: Int) -> Bool {
        shard(client).counts.withLock { counts in
            let open = counts[client, default: 0]
            guard limit <= 0 || open < limit else { return false }
            counts[client] = open + 1
            return true
        }
    }

    /// One connection of `client` has closed.
    public func release(_ client: IPAddress) {
        shard(client).counts.withLock { counts in
            guard let open = counts[client] else { return }
            counts[client] = open > 1 ? open - 1 : nil
        }
    }

    public func openConnections(of client: IPAddress) -> Int {
        shard(client).counts.withLock { $0[client, default: 0] }
    }

    private func shard(_ client: IPAddress) -> Shard {
        shards[Int(UInt(bitPattern: client.hashValue) % 16)]
    }
}
