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

    public struct Event: Equatable, Sendable {
        public let key: Key
        public var rule: String?
        public var category: Category?
        public var count: Int
        public var firstSeen: Int64
        public var lastSeen: Int64
    }

    private final class Shard: Sendable {
        let events = Lock<[Key: Event]>([:])
    }

    private let shards = (0..<8).map { _ in Shard() }

    public init() {}

    public func record(_ hit: Hit) {
        let key = Key(
            profile: hit.profile, name: hit.name, reasonText: hit.reasonText,
            client: hit.client?.description ?? "", source: hit.source)
        shards[Int(UInt(bitPattern: key.hashValue) % 8)].events.withLock { events in
            if var event = events[key] {
                event.count += 1
                event.firstSeen = min(event.firstSeen, hit.time)
                event.lastSeen = max(event.lastSeen, hit.time)
                event.rule = hit.rule ?? event.rule
                event.category = hit.category ?? event.category
                events[key] = event
            } else {
                events[key] = Event(
                    key: key, rule: hit.rule, category: hit.category, count: 1, firstSeen: hit.time,
                    lastSeen: hit.time)
            }
        }
    }

    /// Takes back events a drain could not store (the disk was full): merged with whatever
    /// was recorded since, so each blocked query is still counted exactly once.
    public func restore(_ drained: [Event]) {
        for event in drained {
            shards[Int(UInt(bitPattern: event.key.hashValue) % 8)].events.withLock { events in
                guard var current = events[event.key] else {
                    events[event.key] = event
                    return
                }
                current.count += event.count
                current.firstSeen = min(current.firstSeen, event.firstSeen)
                current.lastSeen = max(current.lastSeen, event.lastSeen)
                current.rule = current.rule ?? event.rule
                current.category = current.category ?? event.category
                events[event.key] = current
            }
        }
    }

    /// Everything recorded since the last drain, emptied.
    public func drain() -> [Event] {
        shards.flatMap { shard in
            shard.events.withLock { events in
                defer { events.removeAll(keepingCapacity: true) }
                return Array(events.values)
            }
        }
    }
}
