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
/// When a cap is reached the longest-idle *sheddable* connection goes so that the new one
/// is served, while a connection busy answering is never picked. What counts as sheddable,
/// and since when, is the owner's call (`CapSlot.markSheddable`, `markIdle`). At the total
/// cap the victim is chosen fairly: it is taken from the client holding the most, as long
/// as that client holds more than the newcomer would after admission; a device with many
/// addresses or MAC addresses that holds every slot loses its own connections to anyone
/// else, never the other way round. Only when nobody holds more than the newcomer is the
/// longest-idle connection of anyone shed.
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

    /// The book, behind the lock. Slots are kept in arrays, each slot holding its own place
    /// in them, so that admitting and releasing are appends and swap-removes: one hash of
    /// the client's key each, and no table keyed by slot. (A client's slots used to be a
    /// dictionary keyed by slot identity, inside a dictionary by client: two lookups and an
    /// insertion or removal per connection, at about 5 % of the proxy's CPU on short tunnels.)
    @usableFromInline
    struct Book {
        @usableFromInline var limits: Limits
        /// Every slot counted, each at its `allIndex`.
        @usableFromInline var all: [CapSlot<Key>] = []
        /// Each client's slots, each at its `keyIndex`; a client with none has no entry.
        @usableFromInline var byKey: [Key: [CapSlot<Key>]] = [:]
        /// Connections counted under each second key (`admit(_:alsoCountedAs:…)`); a key
        /// with none has no entry.
        @usableFromInline var alsoCounted: [Key: Int] = [:]
        /// Admissions so far: orders slots that became sheddable at the same instant.
        @usableFromInline var admitted: UInt64 = 0
        @usableFromInline var shed = 0

        @usableFromInline
        init(limits: Limits) { self.limits = limits }
    }

    @usableFromInline let book: Lock<Book>

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
    /// Inlinable, as is `release`: specialised for the caller's key, a connection's two
    /// visits to the book need no generic metadata looked up at run time.
    ///
    /// `second`: another key the connection also counts under, against the same
    /// per-client cap, which refuses past it (the proxy's device by MAC address is also
    /// counted by its address, so that one address behind many MAC addresses in turn gets
    /// no more than one device's share).
    @inlinable
    public func admit(
        _ key: Key, alsoCountedAs second: Key? = nil, on loop: EventLoop, now: UInt64
    ) -> Result<CapSlot<Key>, Refusal> {
        let outcome: Result<(CapSlot<Key>, [CapSlot<Key>]), Refusal> = book.withLock { book in
            if book.limits.perClient > 0, let second, book.alsoCounted[second, default: 0] >= book.limits.perClient {
                return .failure(.perClient)
            }
            var victims: [CapSlot<Key>] = []
            if book.limits.perClient > 0, let mine = book.byKey[key], mine.count >= book.limits.perClient {
                guard book.limits.shedAtClientCap, let victim = Self.oldest(in: mine) else {
                    return .failure(.perClient)
                }
                victims.append(victim)
                Self.remove(victim, from: &book)
            }
            if book.limits.total > 0, book.all.count >= book.limits.total {
                guard let victim = Self.fairVictim(for: key, in: book) else {
                    for victim in victims { Self.insert(victim, into: &book) }
                    return .failure(.total)
                }
                victims.append(victim)
                Self.remove(victim, from: &book)
            }
            book.admitted &+= 1
            let slot = CapSlot(key: key, second: second, loop: loop, sheddableSince: now, sequence: book.admitted)
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

    /// The connection has closed (or was never started): the slot lets go of it and leaves
    /// the book. Safe to call twice, and for a slot already shed.
    @inlinable
    public func release(_ slot: CapSlot<Key>) {
        slot.detach()
        book.withLock { book in
            guard slot.allIndex >= 0 else { return }
            Self.remove(slot, from: &book)
        }
    }

    /// Connections counted now, in all and for `key`.
    public func count(of key: Key? = nil) -> Int {
        book.withLock { book in key.map { book.byKey[$0]?.count ?? 0 } ?? book.all.count }
    }

    /// Connections counted now under `second` as their second key.
    public func count(alsoCountedAs second: Key) -> Int {
        book.withLock { $0.alsoCounted[second] ?? 0 }
    }

    /// Connections shed since start, to admit others.
    public var shedCount: Int { book.withLock { $0.shed } }

    @usableFromInline
    static func oldest(in slots: [CapSlot<Key>]) -> CapSlot<Key>? {
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

    /// At the total cap: the longest-idle sheddable connection of the client holding the
    /// most, among clients holding more than `key` will after admission (its count + 1);
    /// a client with nothing sheddable passes the choice to the next-largest. When no
    /// client holds more, the longest-idle sheddable connection of anyone, `key`'s own
    /// included. Runs only at the cap, under the lock: a pass over the clients, and over
    /// the slots of those that hold more than the newcomer.
    @usableFromInline
    static func fairVictim(for key: Key, in book: Book) -> CapSlot<Key>? {
        let newcomer = book.byKey[key]?.count ?? 0
        var larger: [[CapSlot<Key>]] = []
        for (client, slots) in book.byKey where client != key && slots.count > newcomer + 1 {
            larger.append(slots)
        }
        larger.sort { $0.count > $1.count }
        for slots in larger {
            if let victim = oldest(in: slots) { return victim }
        }
        return oldest(in: book.all)
    }

    // The client's array is reached through the dictionary's accessor as one `inout`
    // argument: one hash of the key, and the array is changed in place, not copied.

    @inlinable
    static func insert(_ slot: CapSlot<Key>, into book: inout Book) {
        slot.allIndex = append(slot, to: &book.all)
        slot.keyIndex = append(slot, to: &book.byKey[slot.key, default: []])
        if let second = slot.second { book.alsoCounted[second, default: 0] += 1 }
    }

    @inlinable
    static func remove(_ slot: CapSlot<Key>, from book: inout Book) {
        swapRemove(slot.allIndex, from: &book.all) { $0.allIndex = $1 }
        slot.allIndex = -1
        removeFromClient(slot, &book.byKey[slot.key])
        if let second = slot.second { uncount(second, &book.alsoCounted[second]) }
    }

    /// One fewer under `second`; a key left with none loses its entry.
    @inlinable
    static func uncount(_ second: Key, _ count: inout Int?) {
        guard let left = count else { return }
        count = left > 1 ? left - 1 : nil
    }

    /// Appends `slot`; returns its place.
    @inlinable
    static func append(_ slot: CapSlot<Key>, to slots: inout [CapSlot<Key>]) -> Int {
        slots.append(slot)
        return slots.count - 1
    }

    /// Takes `slot` out of its client's slots; a client left with none loses its entry
    /// (nil, through the same accessor).
    @inlinable
    static func removeFromClient(_ slot: CapSlot<Key>, _ slots: inout [CapSlot<Key>]?) {
        guard slots != nil else { return }
        swapRemove(slot.keyIndex, from: &slots!) { $0.keyIndex = $1 }
        if slots!.isEmpty { slots = nil }
    }

    /// Removes `slots[index]` by moving the last slot into its place and telling it so.
    @inlinable
    static func swapRemove(
        _ index: Int, from slots: inout [CapSlot<Key>], moved: (CapSlot<Key>, Int) -> Void
    ) {
        let last = slots.count - 1
        if index != last {
            slots.swapAt(index, last)
            moved(slots[index], index)
        }
        slots.removeLast()
    }
}

/// One connection's entry in `ConnectionCaps`. Its owner says when it may be shed
/// (`markSheddable`) and when not (`markBusy`); both are one atomic store, for the hot path.
public final class CapSlot<Key: Hashable & Sendable>: @unchecked Sendable {
    // Sendable: `allIndex` and `keyIndex` are read and written only under the book's lock;
    // the rest is immutable or atomic.
    @usableFromInline static var busy: UInt64 { .max }

    public let key: Key
    /// The other key it is counted under, if any (`admit(_:alsoCountedAs:…)`).
    public let second: Key?
    @usableFromInline let loop: EventLoop
    /// Since when (monotonic nanoseconds) the connection may be shed; `busy` while not.
    @usableFromInline let sheddableSince: Atomic<UInt64>
    /// Order of admission (`Book.admitted`).
    @usableFromInline let sequence: UInt64
    /// Places in the book's arrays (-1: not in the book: released or shed).
    @usableFromInline var allIndex = -1
    @usableFromInline var keyIndex = -1
    /// The connection, retained, from `attach` until `detach` or a shed takes it: one
    /// atomic exchange decides which of the two gets it, on whatever thread each runs.
    /// Held strongly, not by a weak reference: a weak reference gives the connection a
    /// side table, and every retain and release of it for its whole life then goes through
    /// that table (about 3 % of the proxy's CPU on short tunnels, docs/performance.md). The
    /// cycle connection → slot → connection is broken by `release`, which every connection
    /// calls when it closes.
    @usableFromInline let connection = Atomic<UnsafeRawPointer?>(nil)

    @usableFromInline
    init(key: Key, second: Key?, loop: EventLoop, sheddableSince: UInt64, sequence: UInt64) {
        self.key = key
        self.second = second
        self.loop = loop
        self.sheddableSince = Atomic(sheddableSince)
        self.sequence = sequence
    }

    deinit { detach() }

    /// The connection this slot counts (on its loop's thread, before the loop turns).
    public func attach(_ connection: some Sheddable) {
        let retained = UnsafeRawPointer(Unmanaged.passRetained(connection as AnyObject).toOpaque())
        if let previous = self.connection.exchange(retained, ordering: .acquiringAndReleasing) {
            Unmanaged<AnyObject>.fromOpaque(previous).release()
        }
    }

    /// Lets go of the connection, if a shed has not taken it: one asked for later finds none.
    @inlinable
    func detach() {
        if let held = connection.exchange(nil, ordering: .acquiringAndReleasing) {
            Unmanaged<AnyObject>.fromOpaque(held).release()
        }
    }

    /// From `now` the connection may be shed (it waits on its client). Keeps an earlier
    /// instant: the connection that has waited longest is the one shed.
    @inline(__always)
    public func markSheddable(since now: UInt64) {
        if sheddableSince.load(ordering: .relaxed) == Self.busy { sheddableSince.store(now, ordering: .relaxed) }
    }

    /// The connection may be shed, idle since `since` (a tunnel: when a byte last moved).
    /// Unlike `markSheddable`, a later instant replaces an earlier one.
    @inline(__always)
    public func markIdle(since: UInt64) {
        sheddableSince.store(since, ordering: .relaxed)
    }

    /// The connection is doing work for its client (a query in flight, an answer to write).
    @inline(__always)
    public func markBusy() {
        sheddableSince.store(Self.busy, ordering: .relaxed)
    }

    /// On the connection's loop, takes the connection (unless it has let go meanwhile) and
    /// sheds it.
    @usableFromInline
    func requestShed() {
        loop.execute { [self] in
            guard let held = connection.exchange(nil, ordering: .acquiringAndReleasing) else { return }
            let object = Unmanaged<AnyObject>.fromOpaque(held).takeRetainedValue()
            (object as? any Sheddable)?.shed()
        }
    }
}
