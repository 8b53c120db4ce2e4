import Synchronization

/// Queries and rewrites of one profile, counted by the proxies for the hourly
/// `web_activity` summary (docs/sync.md#activity); blocks are counted from the hits. One atomic add
/// per query; rewrites (rare) under a lock.
public final class ActivityCounters: Sendable {
    private let queries = Atomic<Int>(0)
    private let rewrites = Mutex<[String: Int]>([:])

    public init() {}

    public func recordQuery() { queries.add(1, ordering: .relaxed) }

    /// `target` is the safe-search host; the engine is its brand (`forcesafesearch.google.com`
    /// → `google`).
    public func recordRewrite(target: String) {
        let labels = target.split(separator: ".")
        let engine = labels.count >= 2 ? String(labels[labels.count - 2]) : target
        rewrites.withLock { $0[engine, default: 0] += 1 }
    }

    /// The counts since the last drain, reset.
    public func drain() -> (queries: Int, rewritesByEngine: [String: Int]) {
        let count = queries.exchange(0, ordering: .relaxed)
        let byEngine = rewrites.withLock { counts in
            defer { counts.removeAll() }
            return counts
        }
        return (count, byEngine)
    }
}
