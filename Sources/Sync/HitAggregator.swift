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

    /// One event, 56 bytes: its key is kept only as the bytes `Hit.appendIdentity` wrote,
    /// and made into strings when the flush asks for it. A window after a burst holds
    /// thousands of events, two windows' worth while one is being flushed.
    public struct Event: Equatable, Sendable {
        /// The key as `Hit.appendIdentity` writes it: what the event is looked up by.
        let identity: Identity
        public var rule: String?
        public var category: Category?
        public var count: Int
        public var firstSeen: Int64
        public var lastSeen: Int64

        /// Profile, name, reason text, client and source, read from the identity.
        public var key: Key { identity.key }
    }

    /// An event's key as bytes, hashed and compared as bytes.
    struct Identity: Hashable, Sendable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }

        var key: Key {
            let fields = fields
            return Key(
                profile: fields.profile, name: fields.name, reasonText: fields.reasonText,
                client: fields.client?.description ?? "", source: fields.source)
        }

        /// The fields `Hit.appendIdentity` wrote: three length-prefixed texts, the client
        /// (a tag, 0 for none, 4 or 6, and its address bytes) and the source.
        var fields: (profile: String, name: String, reasonText: String, client: IPAddress?, source: HitSource) {
            var position = 0
            func text() -> String {
                let length = Int(bytes[position]) << 8 | Int(bytes[position + 1])
                defer { position += 2 + length }
                return String(decoding: bytes[(position + 2)..<(position + 2 + length)], as: UTF8.self)
            }
            func word(_ count: Int) -> UInt64 {
                var value: UInt64 = 0
                for _ in 0..<count {
                    value = value << 8 | UInt64(bytes[position])
                    position += 1
                }
                return value
            }
            let profile = text()
            let name = text()
            let reasonText = text()
            let tag = bytes[position]
            position += 1
            let client: IPAddress?
            switch tag {
            case 4: client = .v4(UInt32(truncatingIfNeeded: word(4)))
            case 6: client = .v6(high: word(8), low: word(8))
            default: client = nil
            }
            switch bytes[position] {
            case 2: return (profile, name, reasonText, client, .proxy)
            case 3: return (profile, name, reasonText, client, .transparent)
            default: return (profile, name, reasonText, client, .dns)
            }
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
                // Bytes of its own: the event would otherwise keep the shard's storage.
                let identity = Identity(bytes: table.scratch.withUnsafeBufferPointer { Array($0) })
                table.positions[identity] = table.events.count
                table.events.append(
                    Event(
                        identity: identity, rule: hit.rule, category: hit.category, count: 1, firstSeen: hit.time,
                        lastSeen: hit.time))
            }
        }
    }

    /// Takes back events a drain could not store (the disk was full): merged with whatever
    /// was recorded since, so each blocked query is still counted exactly once.
    public func restore(_ drained: [Event]) {
        for event in drained {
            let owner = event.identity.fields
            shard(profile: owner.profile, client: owner.client).table.withLock { table in
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
