import DomainMatch
import Glibc
import Locks
import Policy

/// Hits as they happen, aggregated in memory per (profile, name, reason, client, source):
/// the A, AAAA and HTTPS queries of one page load become one event whose `count` is the
/// number of blocked queries (docs/sync.md#hits). The sync thread drains it at least every 5 s into
/// the store. Called on every loop thread: sharded locks.
public final class HitAggregator: HitRecorder {
    public struct Key: Hashable, Sendable {
        public let profile: String
        public let name: String
        public let reasonText: String
        public let client: String
        public let source: HitSource
    }

    public struct Event: Equatable, Sendable {
        public let key: Key
        public var rule: String?
        public var category: Category?
        public var count: Int
        public var firstSeen: Int64
        public var lastSeen: Int64
        /// The key as `Hit.appendIdentity` writes it: what the event is looked up by.
        let identity: Identity
    }

    /// An event's key as bytes, hashed and compared as bytes.
    struct Identity: Hashable, Sendable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        static func == (lhs: Identity, rhs: Identity) -> Bool {
            guard lhs.bytes.count == rhs.bytes.count else { return false }
            return lhs.bytes.withUnsafeBytes { left in
                rhs.bytes.withUnsafeBytes { right in
                    left.baseAddress == right.baseAddress
                        || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
                }
            }
        }
    }

    /// A shard's events in the order they came, where each is by its identity, and the
    /// storage a hit's identity is written into under its lock: a hit of an event already
    /// there makes no string and allocates nothing (docs/performance.md#allocations-per-query);
    /// a new event makes its key's strings. The events are an array so that a drain hands
    /// them over without copying them.
    private struct Table {
        var events: [Event] = []
        var positions: [Identity: Int] = [:]
        var scratch: [UInt8] = []
    }

    private final class Shard: Sendable {
        let table = Lock<Table>(Table())
    }

    private let shards = (0..<8).map { _ in Shard() }

    public init() {}

    /// By what every hit of one event shares and is cheap to hash (profile and client).
    private func shard(profile: String, client: IPAddress?) -> Shard {
        var hasher = Hasher()
        hasher.combine(profile)
        hasher.combine(client)
        return shards[Int(UInt(bitPattern: hasher.finalize()) % 8)]
    }

    public func record(_ hit: Hit) {
        shard(profile: hit.profile, client: hit.client).table.withLock { table in
            table.scratch.removeAll(keepingCapacity: true)
            if table.scratch.capacity == 0 { table.scratch.reserveCapacity(512) }
            hit.appendIdentity(to: &table.scratch)
            let identity = Identity(bytes: table.scratch)
            if let position = table.positions[identity] {
                table.events[position].count += 1
                table.events[position].firstSeen = min(table.events[position].firstSeen, hit.time)
                table.events[position].lastSeen = max(table.events[position].lastSeen, hit.time)
                if !hit.keepsRule(table.events[position].rule) { table.events[position].rule = hit.rule }
                if let category = hit.category { table.events[position].category = category }
            } else {
                let key = Key(
                    profile: hit.profile, name: hit.name, reasonText: hit.reasonText,
                    client: hit.client?.description ?? "", source: hit.source)
                // Bytes of its own: the event would otherwise keep the shard's storage.
                let identity = Identity(bytes: table.scratch.withUnsafeBufferPointer { Array($0) })
                table.positions[identity] = table.events.count
                table.events.append(
                    Event(
                        key: key, rule: hit.rule, category: hit.category, count: 1, firstSeen: hit.time,
                        lastSeen: hit.time, identity: identity))
            }
        }
    }

    /// Takes back events a drain could not store (the disk was full): merged with whatever
    /// was recorded since, so each blocked query is still counted exactly once.
    public func restore(_ drained: [Event]) {
        for event in drained {
            let client = event.key.client.isEmpty ? nil : IPAddress(event.key.client)
            shard(profile: event.key.profile, client: client).table.withLock { table in
                guard let position = table.positions[event.identity] else {
                    table.positions[event.identity] = table.events.count
                    table.events.append(event)
                    return
                }
                table.events[position].count += event.count
                table.events[position].firstSeen = min(table.events[position].firstSeen, event.firstSeen)
                table.events[position].lastSeen = max(table.events[position].lastSeen, event.lastSeen)
                table.events[position].rule = table.events[position].rule ?? event.rule
                table.events[position].category = table.events[position].category ?? event.category
            }
        }
    }

    /// Everything recorded since the last drain, emptied.
    ///
    /// Each shard's lock is held for a swap, not for copying its events: a loop recording a
    /// hit waits on that lock, and after a burst a shard holds thousands of events. The
    /// events of the first shard that has any are handed over as they are, not copied (with
    /// one client, all of them). The shard starts the next window empty rather than sized
    /// like the last: after a burst that would keep megabytes for events that may not come.
    public func drain() -> [Event] {
        var drained: [Event] = []
        for shard in shards {
            var events: [Event] = []
            var positions: [Identity: Int] = [:]
            shard.table.withLock { table in
                swap(&events, &table.events)
                swap(&positions, &table.positions)
            }
            if drained.isEmpty { drained = events } else { drained.append(contentsOf: events) }
        }
        return drained
    }

    /// The capacity of each shard's table, for the tests.
    var capacities: [Int] {
        shards.map { shard in shard.table.withLock { max($0.events.capacity, $0.positions.capacity) } }
    }
}
