import DomainMatch
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

    /// One event as the flush reads it, made from the window's bytes when asked: its
    /// identity, and the strings of its key and rule only when those are read.
    public struct Event: Equatable, Sendable {
        /// The key as `HitIdentity.append` writes it.
        let identity: Identity
        public var rule: String?
        public var category: Category?
        public var count: Int
        public var firstSeen: Int64
        public var lastSeen: Int64
        /// Names the window's bound folded into this event (its name `*.RULE` or `*`); 0
        /// for the name asked.
        public var names: Int = 0

        /// Profile, name, reason text, client and source, read from the identity.
        public var key: Key { identity.key }
    }

    /// An event's key as bytes.
    struct Identity: Equatable, Sendable {
        let bytes: [UInt8]

        var key: Key {
            let fields = fields
            return Key(
                profile: fields.profile, name: fields.name, reasonText: fields.reasonText,
                client: fields.client?.description ?? "", source: fields.source)
        }

        /// The fields the identity holds (`HitIdentity.decode`).
        var fields: HitIdentity.Fields { HitIdentity.decode(bytes) }
    }

    /// A shard's window under its lock, and the storage a hit's identity is written into
    /// before it is looked up: recording a hit allocates nothing from malloc, whether its
    /// event is new or not (docs/performance.md#allocations-per-query).
    private struct Table {
        var pages = WindowPages()
        var scratch: [UInt8] = []
        /// Hits folded into their rule, and hits dropped, at the window's bound, since the start.
        var folded = 0
        var dropped = 0
        /// The names folded in this window, by hash, so a folded event counts each name once
        /// however often it is asked; at most `foldedNamesLimit`, past which a new name is
        /// not counted (the count is then a lower bound).
        var foldedNames = Set<Int>()
    }

    static let foldedNamesLimit = 4096

    private final class Shard: Sendable {
        let table = Lock<Table>(Table())
    }

    private let shards = (0..<8).map { _ in Shard() }
    /// The events one shard's window holds before new names fold into their rule.
    let eventsPerShard: Int

    /// `eventsPerShard`: the window's bound (docs/sync.md#bounds); a window's memory is
    /// about 130 bytes an event for common names, at most about 380 for 253-byte ones.
    public init(eventsPerShard: Int = HitAggregator.defaultEventsPerShard) {
        self.eventsPerShard = max(1, eventsPerShard)
    }

    /// A shard takes the hits of the clients that hash to it; one device asking 1,024
    /// distinct blocked names within a flush interval (5 s) is far past a person browsing.
    public static let defaultEventsPerShard = 1024

    /// Room kept past the bound for the folded events (`*.RULE` per client, rule and
    /// reason); a hit that would need more is dropped and counted.
    static func foldRoom(_ events: Int) -> Int { max(16, events / 8) }

    /// Hits folded into their rule and hits dropped at the windows' bound since the start
    /// (for `/metrics`).
    public var boundCounts: (folded: Int, dropped: Int) {
        shards.reduce((0, 0)) { sum, shard in
            shard.table.withLock { (sum.0 + $0.folded, sum.1 + $0.dropped) }
        }
    }

    /// By what every hit of one event shares and is cheap to hash (profile and client).
    private func shard(profile: String, client: IPAddress?) -> Shard {
        var hasher = Hasher()
        hasher.combine(profile)
        hasher.combine(client)
        return shards[Int(UInt(bitPattern: hasher.finalize()) % 8)]
    }

    /// Past the window's bound a hit of a name the window does not hold is folded into its
    /// rule's event (`*.RULE` for its client and reason); past the fold room it is dropped.
    /// Either way the memory stays bounded whatever names a device asks for.
    public func record(_ hit: Hit) {
        let limit = eventsPerShard
        shard(profile: hit.profile, client: hit.client).table.withLock { table in
            if add(hit, folded: false, limit: limit, &table) { return }
            let newName =
                table.foldedNames.count < Self.foldedNamesLimit && table.foldedNames.insert(hit.name.hashValue).inserted
            if add(hit, folded: true, names: newName ? 1 : 0, limit: limit + Self.foldRoom(limit), &table) {
                table.folded += 1
            } else {
                table.dropped += 1
            }
        }
    }

    private func add(_ hit: Hit, folded: Bool, names: Int = 0, limit: Int, _ table: inout Table) -> Bool {
        table.scratch.removeAll(keepingCapacity: true)
        if table.scratch.capacity == 0 { table.scratch.reserveCapacity(1024) }
        HitIdentity.append(hit, folded: folded, to: &table.scratch)
        let identityLength = table.scratch.count
        let hasRule = hit.appendRule(to: &table.scratch)
        let category = hit.category
        let time = hit.time
        return table.scratch.withUnsafeBytes { [pages = table.pages] bytes in
            let identity = UnsafeRawBufferPointer(rebasing: bytes[..<identityLength])
            let rule = hasRule ? UnsafeRawBufferPointer(rebasing: bytes[identityLength...]) : nil
            return pages.add(
                identity: identity, rule: rule, replacingRule: true, category: category, count: 1,
                firstSeen: time, lastSeen: time, names: names, limit: limit)
        }
    }

    /// Takes back events a drain could not store (the disk was full): merged with whatever
    /// was recorded since, so each blocked query is still counted exactly once. A rule or
    /// category recorded since is kept over the restored one.
    public func restore(_ drained: some Sequence<Event>) {
        var ruleBytes: [UInt8] = []
        for event in drained {
            let owner = event.identity.fields
            ruleBytes.removeAll(keepingCapacity: true)
            if var rule = event.rule { rule.withUTF8 { ruleBytes.append(contentsOf: $0) } }
            shard(profile: owner.profile, client: owner.client).table.withLock { table in
                event.identity.bytes.withUnsafeBytes { identity in
                    ruleBytes.withUnsafeBytes { rule in
                        // Past the bound (writes failed for long) the oldest events
                        // taken back are dropped, counted, rather than held without end.
                        let limit = eventsPerShard + Self.foldRoom(eventsPerShard)
                        if !table.pages.add(
                            identity: identity, rule: event.rule == nil ? nil : rule, replacingRule: false,
                            category: event.category, count: event.count, firstSeen: event.firstSeen,
                            lastSeen: event.lastSeen, names: event.names, limit: limit)
                        {
                            table.dropped += event.count
                        }
                    }
                }
            }
        }
    }

    /// Everything recorded since the last drain, emptied: each shard's window is handed
    /// over whole under its lock (a swap, nothing copied: a loop recording a hit waits on
    /// that lock). The shard starts the next window in regions the caller maps first,
    /// outside the lock, with room for as many events as the window it hands over (up to
    /// `presizedEvents`): the threads that record hits at a steady rate then map nothing
    /// and rebuild no table. The window's pages go back to the kernel when the caller lets
    /// go of it, and a shard that had no events starts with no pages.
    public func drain() -> HitWindow {
        var parts: [WindowPages] = []
        for shard in shards {
            let (events, bytes) = shard.table.withLock { ($0.pages.count, $0.pages.bytesUsed) }
            let expected = min(events, Self.presizedEvents)
            var pages = WindowPages(events: expected, identityBytes: events == 0 ? 0 : bytes / events * expected)
            shard.table.withLock { table in
                swap(&pages, &table.pages)
                table.foldedNames = []
            }
            if pages.count > 0 { parts.append(pages) }
        }
        return HitWindow(parts)
    }

    /// The most events a shard's next window is mapped for ahead (about 430 KB of address
    /// space, resident only as events come): a steady household's blocked names per window
    /// fit many times over; a burst beyond maps the rest as it comes, and is not mapped
    /// for the windows after.
    static let presizedEvents = 4096

    /// For the tests: each shard's window's events, `mmap` and `mremap` calls and rebuilt
    /// tables so far.
    var storageCounts: [(events: Int, mappings: Int, rehashes: Int)] {
        shards.map { shard in shard.table.withLock { ($0.pages.count, $0.pages.mappings, $0.pages.rehashes) } }
    }

    /// The events each shard's window has room for, for the tests.
    var capacities: [Int] {
        shards.map { shard in shard.table.withLock { $0.pages.capacity } }
    }
}
