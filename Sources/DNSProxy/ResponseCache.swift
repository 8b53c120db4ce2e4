import Locks
import Synchronization

/// The cache of upstream answers (docs/dns.md#cache): at most `capacity` entries with LRU
/// eviction, shared by every loop thread. Sharded so threads rarely wait on one lock.
public final class ResponseCache: Sendable {
    public enum Lookup {
        case fresh(CacheEntry, ageSeconds: UInt32)
        /// Expired, but within `serve_stale_max`: served only when the upstream is slow.
        case stale(CacheEntry)
        case miss
    }

    private let shards: [Shard]
    /// Milliseconds past expiry during which an entry may still be served stale.
    private let staleLimit: Int64

    public init(capacity: Int, serveStaleMax: Int64) {
        let count = capacity >= 4096 ? 16 : 1
        let perShard = max(1, capacity / count)
        shards = (0..<count).map { _ in Shard(capacity: perShard) }
        staleLimit = serveStaleMax
    }

    private func shard(_ key: CacheKey) -> Shard {
        shards[Int(UInt(bitPattern: key.hashValue) % UInt(shards.count))]
    }

    /// A lock and its map; a class because a `Lock` (not copyable) cannot live in an array.
    private final class Shard: Sendable {
        let lock: Lock<LRUShard>
        init(capacity: Int) { lock = Lock(LRUShard(capacity: capacity)) }
    }

    /// `now` in monotonic milliseconds.
    public func lookup(_ key: CacheKey, now: Int64) -> Lookup {
        guard let entry = shard(key).lock.withLock({ $0.get(key) }) else { return .miss }
        let age = max(0, now - entry.storedAt)
        if age < Int64(entry.ttl) * 1000 { return .fresh(entry, ageSeconds: UInt32(age / 1000)) }
        if age < Int64(entry.ttl) * 1000 + staleLimit { return .stale(entry) }
        shard(key).lock.withLock { $0.remove(key) }
        return .miss
    }

    public func store(_ key: CacheKey, _ entry: CacheEntry) {
        let key = key.owned
        shard(key).lock.withLock { $0.put(key, entry) }
    }

    public var count: Int { shards.reduce(0) { $0 + $1.lock.withLock { $0.count } } }

    /// The capacity of each stored key's name, for a test that it keeps no reused storage.
    var storedNameCapacities: [Int] {
        shards.flatMap { $0.lock.withLock { $0.storedKeys.map(\.name.capacity) } }
    }
}

/// A least-recently-used map in flat arrays: no node objects, indices for links.
struct LRUShard {
    private var index: [CacheKey: Int] = [:]
    private var keys: [CacheKey?] = []
    private var values: [CacheEntry?] = []
    private var previous: [Int] = []
    private var next: [Int] = []
    private var head = -1, tail = -1
    private var free: [Int] = []
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { index.count }

    var storedKeys: [CacheKey] { Array(index.keys) }

    mutating func get(_ key: CacheKey) -> CacheEntry? {
        guard let slot = index[key] else { return nil }
        moveToFront(slot)
        return values[slot]
    }

    mutating func put(_ key: CacheKey, _ value: CacheEntry) {
        if let slot = index[key] {
            values[slot] = value
            moveToFront(slot)
            return
        }
        if index.count >= capacity, tail >= 0, let oldest = keys[tail] { remove(oldest) }
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            keys[slot] = key
            values[slot] = value
        } else {
            slot = keys.count
            keys.append(key)
            values.append(value)
            previous.append(-1)
            next.append(-1)
        }
        index[key] = slot
        link(slot)
    }

    mutating func remove(_ key: CacheKey) {
        guard let slot = index.removeValue(forKey: key) else { return }
        unlink(slot)
        keys[slot] = nil
        values[slot] = nil
        free.append(slot)
    }

    private mutating func moveToFront(_ slot: Int) {
        guard head != slot else { return }
        unlink(slot)
        link(slot)
    }

    private mutating func link(_ slot: Int) {
        previous[slot] = -1
        next[slot] = head
        if head >= 0 { previous[head] = slot }
        head = slot
        if tail < 0 { tail = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let before = previous[slot]
        let after = next[slot]
        if before >= 0 { next[before] = after } else { head = after }
        if after >= 0 { previous[after] = before } else { tail = before }
        previous[slot] = -1
        next[slot] = -1
    }
}
