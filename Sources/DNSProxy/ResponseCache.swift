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

    /// Keeps `entry` as the answer to `key`, the question it answers (else it is not kept).
    public func store(_ key: CacheKey, _ entry: CacheEntry) {
        shard(key).lock.withLock { $0.put(key, entry) }
    }

    public var count: Int { shards.reduce(0) { $0 + $1.lock.withLock { $0.count } } }
}

/// A least-recently-used map in flat arrays: no node objects, indices for links, and an
/// open-addressed table of slot numbers instead of a dictionary keyed by `CacheKey`. A
/// slot keeps its key's scalars; the name is compared with the stored answer's question,
/// so no copy of it is kept (docs/performance.md#the-heap-by-owner).
struct LRUShard {
    /// What a slot's key is besides its name.
    private struct Stored {
        var digest: UInt64
        var type: UInt16
        var dnsClass: UInt16
        var flags: UInt8

        init(_ key: CacheKey) {
            digest = key.digest
            type = key.type
            dnsClass = key.dnsClass
            flags = (key.dnssecOK ? 2 : 0) | (key.checkingDisabled ? 1 : 0)
        }
    }

    /// Slot numbers, -1 where empty; linear probing, at most half full.
    private var table: [Int32] = []
    private var keys: [Stored] = []
    private var values: [CacheEntry?] = []
    private var previous: [Int32] = []
    private var next: [Int32] = []
    private var head: Int32 = -1, tail: Int32 = -1
    private var free: [Int32] = []
    private(set) var count = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    mutating func get(_ key: CacheKey) -> CacheEntry? {
        guard case .found(let slot) = find(key) else { return nil }
        moveToFront(slot)
        return values[Int(slot)]
    }

    /// Stores `value` for `key`, which must be its question's (`CacheEntry.answers`);
    /// an answer that is not is left out rather than kept under another question.
    mutating func put(_ key: CacheKey, _ value: CacheEntry) {
        guard value.answers(key) else { return }
        if case .found(let slot) = find(key) {
            values[Int(slot)] = value
            moveToFront(slot)
            return
        }
        if count >= capacity, tail >= 0 { removeSlot(tail) }
        if (count + 1) * 2 > table.count { grow() }
        guard case .empty(let bucket) = find(key) else { return }
        let slot: Int32
        if let reused = free.popLast() {
            slot = reused
            keys[Int(slot)] = Stored(key)
            values[Int(slot)] = value
        } else {
            slot = Int32(keys.count)
            keys.append(Stored(key))
            values.append(value)
            previous.append(-1)
            next.append(-1)
        }
        table[bucket] = slot
        count += 1
        link(slot)
    }

    mutating func remove(_ key: CacheKey) {
        guard case .found(let slot) = find(key) else { return }
        removeSlot(slot)
    }

    private enum Probe {
        case found(slot: Int32)
        case empty(bucket: Int)
    }

    private func home(_ digest: UInt64) -> Int {
        // The digest's high bits after a multiply: FNV's low bits vary too little.
        Int(truncatingIfNeeded: (digest &* 0x9E37_79B9_7F4A_7C15) >> 32) & (table.count - 1)
    }

    private func find(_ key: CacheKey) -> Probe {
        guard !table.isEmpty else { return .empty(bucket: 0) }
        let wanted = Stored(key)
        var bucket = home(key.digest)
        while true {
            let slot = table[bucket]
            if slot < 0 { return .empty(bucket: bucket) }
            let stored = keys[Int(slot)]
            if stored.digest == wanted.digest, stored.type == wanted.type, stored.dnsClass == wanted.dnsClass,
                stored.flags == wanted.flags, values[Int(slot)]?.answers(key) == true
            {
                return .found(slot: slot)
            }
            bucket = (bucket + 1) & (table.count - 1)
        }
    }

    /// Empties a slot and closes the gap in its probe run (backward shift: no tombstones,
    /// so lookups never slow down as entries come and go).
    private mutating func removeSlot(_ slot: Int32) {
        let mask = table.count - 1
        var gap = home(keys[Int(slot)].digest)
        while table[gap] != slot { gap = (gap + 1) & mask }
        var probe = gap
        while true {
            probe = (probe + 1) & mask
            let moving = table[probe]
            if moving < 0 { break }
            let wants = home(keys[Int(moving)].digest)
            // Moves back unless its home lies after the gap, up to where it is.
            if (probe - wants) & mask >= (probe - gap) & mask {
                table[gap] = moving
                gap = probe
            }
        }
        table[gap] = -1
        unlink(slot)
        values[Int(slot)] = nil
        free.append(slot)
        count -= 1
    }

    private mutating func grow() {
        var size = max(16, table.count)
        while size < (count + 1) * 2 { size *= 2 }
        if size == table.count { size *= 2 }
        table = [Int32](repeating: -1, count: size)
        var slot = head
        while slot >= 0 {
            var bucket = home(keys[Int(slot)].digest)
            while table[bucket] >= 0 { bucket = (bucket + 1) & (size - 1) }
            table[bucket] = slot
            slot = next[Int(slot)]
        }
    }

    private mutating func moveToFront(_ slot: Int32) {
        guard head != slot else { return }
        unlink(slot)
        link(slot)
    }

    private mutating func link(_ slot: Int32) {
        previous[Int(slot)] = -1
        next[Int(slot)] = head
        if head >= 0 { previous[Int(head)] = slot }
        head = slot
        if tail < 0 { tail = slot }
    }

    private mutating func unlink(_ slot: Int32) {
        let before = previous[Int(slot)]
        let after = next[Int(slot)]
        if before >= 0 { next[Int(before)] = after } else { head = after }
        if after >= 0 { previous[Int(after)] = before } else { tail = before }
        previous[Int(slot)] = -1
        next[Int(slot)] = -1
    }
}
