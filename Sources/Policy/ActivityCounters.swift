import DomainMatch
import Locks
import Synchronization

/// Queries, rewrites and clients of one profile, counted by the proxies for the hourly
/// `web_activity` summary (docs/sync.md#activity) and for `status` (the clients seen in
/// the last hour); blocks are counted from the hits. One atomic add per query, and one
/// uncontended lock around a dictionary that already holds the client (no allocation);
/// rewrites (rare) under a lock.
public final class ActivityCounters: Sendable {
    /// How many distinct clients one profile remembers between two drains: a bound even
    /// if many sources were proven (a device answering ARP for a whole subnet); past the
    /// cap, queries still count, only the new clients are not named.
    public static let clientCap = 1024

    private let queries = Atomic<Int>(0)
    private let rewrites = Lock<[DomainName: Int]>([:])
    /// Since the start, never drained: what `/metrics` reads.
    private let queriesSinceStart = Atomic<Int>(0)
    private let rewritesSinceStart = Atomic<Int>(0)
    private let clients = Lock<[SeenClient: Int]>([:])

    public init() {}

    /// One query (a DNS question, a CONNECT, a plain-HTTP request) from `client`; nil when
    /// the query does not prove who sent it (a UDP source the neighbour table does not
    /// know): counted, but naming no device.
    public func recordQuery(from client: SeenClient?) {
        queries.add(1, ordering: .relaxed)
        queriesSinceStart.add(1, ordering: .relaxed)
        guard let client else { return }
        clients.withLock { seen in
            if let index = seen.index(forKey: client) {
                seen.values[index] += 1
            } else if seen.count < Self.clientCap {
                seen[client] = 1
            }
        }
    }

    /// `target` is the safe-search host; the engine is its brand (`forcesafesearch.google.com`
    /// → `google`).
    public func recordRewrite(target: DomainName) {
        // By target, folded into engines at the drain: a rewrite counted on a loop makes no
        // string (docs/performance.md#allocations-per-query).
        rewrites.withLock { $0[target, default: 0] += 1 }
        rewritesSinceStart.add(1, ordering: .relaxed)
    }

    /// The search engine of a rewrite target: its second-to-last label (`google` of
    /// `forcesafesearch.google.com`).
    static func engine(of target: String) -> String {
        let labels = target.split(separator: ".")
        return labels.count >= 2 ? String(labels[labels.count - 2]) : target
    }

    /// Queries and rewrites since the start (not reset by `drain`).
    public var totals: (queries: Int, rewrites: Int) {
        (queriesSinceStart.load(ordering: .relaxed), rewritesSinceStart.load(ordering: .relaxed))
    }

    /// The counts since the last drain, reset.
    public func drain() -> (queries: Int, rewritesByEngine: [String: Int], clients: [SeenClient: Int]) {
        let count = queries.exchange(0, ordering: .relaxed)
        let byTarget = rewrites.withLock { counts in
            defer { counts.removeAll() }
            return counts
        }
        var byEngine: [String: Int] = [:]
        for (target, rewrites) in byTarget { byEngine[Self.engine(of: target.description), default: 0] += rewrites }
        // The next drain's table starts at this one's size, so the loops do not grow it
        // again query by query.
        let seen = clients.withLock { seen in
            defer { seen.removeAll(keepingCapacity: true) }
            return seen
        }
        return (count, byEngine, seen)
    }
}

/// A device as `status` names it: its address, and its MAC when the neighbour table knew
/// it (a phone's rotating IPv6 addresses are one device by their MAC).
public struct SeenClient: Hashable, Sendable {
    public var address: IPAddress?
    public var mac: MACAddress?

    public init(address: IPAddress?, mac: MACAddress?) {
        self.address = address
        self.mac = mac
    }

    /// What one device is known by: its MAC when known, else its address.
    public var key: String { mac?.description ?? address?.description ?? "unknown" }
}
