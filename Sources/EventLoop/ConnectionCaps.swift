import Locks
import Synchronization

/// A connection that `ConnectionCaps` may ask to go: `shed()` is called on the loop the
/// connection lives on, at most once, and must close it (releasing its slot).
public protocol Sheddable: AnyObject {
    func shed()
}

/// How many stream connections one client and everyone together may hold
/// (docs/configuration.md#limits): DNS over TCP and the HTTP proxy each have one. With
/// `SO_REUSEPORT` one client's connections land on several loops, so the book is shared by
/// every loop: one lock, taken when a connection opens or closes; the hot path (a query
/// answered, a head read) only stores into its own slot's atomic.
///
/// When a cap is reached the oldest *sheddable* connection goes so that the new one is
/// served: a hostile device that opens connections and sits on them (or trickles a byte at
/// a time) loses its oldest ones, while a connection busy answering is never picked. What
/// counts as sheddable is the owner's call (`CapSlot.markSheddable`).
public final class ConnectionCaps<Key: Hashable & Sendable>: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Connections one client may hold; 0 = no limit.
        public var perClient: Int
        /// Connections all clients together may hold; 0 = no limit.
        public var total: Int
        /// At the per-client cap, shed that client's oldest sheddable connection (true) or
        /// refuse the new one (false).
        public var shedAtClientCap: Bool

        public init(perClient: Int, total: Int, shedAtClientCap: Bool) {
            self.perClient = perClient
            self.total = total
            self.shedAtClientCap = shedAtClientCap
        }
    }

    /// Why a connection was not admitted.
    public enum Refusal: Error, Equatable, Sendable {
        /// The client holds its cap (and nothing of its own could be shed).
        case perClient
        /// Everyone together holds the total cap and nothing could be shed.
        case total
    }

    private struct Book {
        var limits: Limits
        var slots: [ObjectIdentifier: CapSlot<Key>] = [:]
        /// Each client's slots by identity, so that a close removes its own in place. (A list
        /// per client was searched and copied whole on every close, under the lock: 256
        /// retains and a fresh array for a device at its cap, once per tunnel.)
        var byKey: [Key: [ObjectIdentifier: CapSlot<Key>]] = [:]
        /// Admissions so far: orders slots that became sheddable at the same instant.
        var admitted: UInt64 = 0
        var shed = 0
    }

    private let book: Lock<Book>

    public init(_ limits: Limits) {
        book = Lock(Book(limits: limits))
    }

    /// New limits (a reload): connections already over them stay until they close.
    public func update(_ limits: Limits) {
        book.withLock { $0.limits = limits }
    }

    public var limits: Limits { book.withLock { $0.limits } }

    /// Counts a new connection of `key` that lives on `loop`, shedding the oldest sheddable
    /// connection (of the client, or of anyone) when a cap is reached. The slot starts
    /// sheddable from `now`; give it its connection with `attach` before the loop turns.
    public func admit(_ key: Key, on loop: EventLoop, now: UInt64) -> Result<CapSlot<Key>, Refusal> {
        let outcome: Result<(CapSlot<Key>, [CapSlot<Key>]), Refusal> = book.withLock { book in
            var victims: [CapSlot<Key>] = []
            if book.limits.perClient > 0, let mine = book.byKey[key], mine.count >= book.limits.perClient {
                guard book.limits.shedAtClientCap, let victim = Self.oldest(in: mine.values) else {
                    return .failure(.perClient)
                }
                victims.append(victim)
                Self.remove(victim, from: &book)
            }
            if book.limits.total > 0, book.slots.count >= book.limits.total {
                guard let victim = Self.oldest(in: book.slots.values) else {
                    for victim in victims { Self.insert(victim, into: &book) }
                    return .failure(.total)
                }
                victims.append(victim)
                Self.remove(victim, from: &book)
            }
            book.admitted &+= 1
            let slot = CapSlot(key: key, loop: loop, sheddableSince: now, sequence: book.admitted)
            Self.insert(slot, into: &book)
            book.shed += victims.count
            return .success((slot, victims))
        }
        switch outcome {
        case .failure(let refusal): return .failure(refusal)
        case .success(let (slot, victims)):
            for victim in victims { victim.requestShed() }
            return .success(slot)
        }
    }

    /// The connection has closed (or was never started). Safe to call twice, and for a
    /// slot already shed.
    public func release(_ slot: CapSlot<Key>) {
        book.withLock { book in
            guard book.slots[ObjectIdentifier(slot)] != nil else { return }
            Self.remove(slot, from: &book)
        }
    }

    /// Connections counted now, in all and for `key`.
    public func count(of key: Key? = nil) -> Int {
        book.withLock { book in key.map { book.byKey[$0]?.count ?? 0 } ?? book.slots.count }
    }

    /// Connections shed since start, to admit others.
    public var shedCount: Int { book.withLock { $0.shed } }

    private static func oldest(in slots: some Sequence<CapSlot<Key>>) -> CapSlot<Key>? {
        var best: CapSlot<Key>?
        var bestSince = UInt64.max
        for slot in slots {
            let since = slot.sheddableSince.load(ordering: .relaxed)
            guard since != CapSlot<Key>.busy else { continue }
            // Of two that became sheddable at the same instant, the one admitted first.
            if best == nil || since < bestSince || (since == bestSince && slot.sequence < best!.sequence) {
                best = slot
                bestSince = since
            }
        }
        return best
    }

    private static func insert(_ slot: CapSlot<Key>, into book: inout Book) {
        book.slots[ObjectIdentifier(slot)] = slot
        book.byKey[slot.key, default: [:]][ObjectIdentifier(slot)] = slot
    }

    private static func remove(_ slot: CapSlot<Key>, from book: inout Book) {
        book.slots[ObjectIdentifier(slot)] = nil
        // Mutated through the dictionary's accessor, in place: no copy of the client's slots.
        book.byKey[slot.key]?[ObjectIdentifier(slot)] = nil
        if book.byKey[slot.key]?.isEmpty == true { book.byKey[slot.key] = nil }
    }
}

/// One connection's entry in `ConnectionCaps`. Its owner says when it may be shed
/// (`markSheddable`) and when not (`markBusy`); both are one atomic store, for the hot path.
public final class CapSlot<Key: Hashable & Sendable>: Sendable {
    static var busy: UInt64 { .max }

    public let key: Key
    let loop: EventLoop
    /// Since when (monotonic nanoseconds) the connection may be shed; `busy` while not.
    let sheddableSince: Atomic<UInt64>
    /// Order of admission (`Book.admitted`).
    let sequence: UInt64
    private let target = ShedTarget()

    init(key: Key, loop: EventLoop, sheddableSince: UInt64, sequence: UInt64) {
        self.key = key
        self.loop = loop
        self.sheddableSince = Atomic(sheddableSince)
        self.sequence = sequence
    }

    /// The connection this slot counts (on its loop's thread, before the loop turns).
    public func attach(_ connection: some Sheddable) {
        target.connection = connection
    }

    /// From `now` the connection may be shed (it waits on its client). Keeps an earlier
    /// instant: the connection that has waited longest is the one shed.
    @inline(__always)
    public func markSheddable(since now: UInt64) {
        if sheddableSince.load(ordering: .relaxed) == Self.busy { sheddableSince.store(now, ordering: .relaxed) }
    }

    /// The connection is doing work for its client (a query in flight, an answer to write).
    @inline(__always)
    public func markBusy() {
        sheddableSince.store(Self.busy, ordering: .relaxed)
    }

    fileprivate func requestShed() {
        let target = target
        loop.execute { target.connection?.shed() }
    }
}

/// The connection behind a slot, held weakly.
private final class ShedTarget: @unchecked Sendable {
    // Sendable: `connection` is written once by `attach` on the connection's loop thread
    // before any shed can be requested (the slot is admitted and attached in one loop
    // turn), and read only by the task `requestShed` runs on that same loop.
    weak var connection: (any Sheddable)?
}
