import Locks
import Synchronization

/// The minutes one profile spent on each app service, per local day
/// (docs/services.md#budgets). A minute is spent when, within it, any device of the
/// profile asked for one of the service's names or moved bytes through a connection to
/// it, so two phones watching at once spend one minute, not two. Kept for the whole run
/// across policy swaps; the sync flush stores what changed and a start reads today back,
/// so a restart does not refill a budget. One uncontended lock per record.
public final class ServiceUsage: Sendable {
    /// One service on one local day (`LocalDateTime.daysSince1970`).
    public struct Key: Hashable, Sendable {
        public let day: Int
        public let service: String

        public init(day: Int, service: String) {
            self.day = day
            self.service = service
        }
    }

    private struct Entry {
        var minutes = MinuteSet()
        /// Holds minutes the store has not seen yet.
        var unsaved = false
        /// The minutes the shared store has (docs/two-gateways.md): written from here, or
        /// read from it.
        var shared = MinuteSet()
    }

    private let entries = Lock<[Key: Entry]>([:])
    /// The minutes online of the latest day counted, `day << 16 | minutes`, kept beside
    /// the table: the daily limit is asked about on every decision, and this read takes
    /// neither the lock nor a hash (docs/benchmarks.md#the-daily-limit). Written under the lock.
    private let latestOnline = Atomic<Int>(-1)
    /// The Unix minute last counted online: most names of a minute come after its first.
    private let lastOnlineMinute = Atomic<Int64>(.min)

    /// How long a device may cache an answer for a service with a budget, in seconds.
    public static let answerTTL: UInt32 = 60

    /// The key of the profile's minutes online (docs/services.md#minutes-online), kept and
    /// stored beside its apps' minutes: no service id can be spelt so.
    public static let online = "*online"

    /// Called (outside the lock) when a minute is counted for the first time: the shared
    /// store's thread writes it at once. Nil when nothing is shared.
    private let newMinute: (@Sendable () -> Void)?

    public init(newMinute: (@Sendable () -> Void)? = nil) { self.newMinute = newMinute }

    private static func minute(_ unixSeconds: Int64) -> Int64 {
        unixSeconds >= 0 ? unixSeconds / 60 : (unixSeconds - 59) / 60
    }

    /// Called under the lock after a change to `key`.
    private func noteOnline(_ key: Key, _ table: [Key: Entry]) {
        guard key.service == Self.online, let entry = table[key] else { return }
        let current = latestOnline.load(ordering: .relaxed)
        guard current < 0 || key.day >= current >> 16 else { return }
        latestOnline.store(key.day << 16 | entry.minutes.count, ordering: .relaxed)
    }

    /// The profile's minutes online on `day`: without the lock when `day` is the latest day counted.
    public func onlineMinutes(day: Int) -> Int {
        let latest = latestOnline.load(ordering: .relaxed)
        guard latest >= 0 else { return 0 }
        let latestDay = latest >> 16
        if day == latestDay { return latest & 0xFFFF }
        return day > latestDay ? 0 : minutes(Self.online, day: day)
    }

    /// A "what if" for `check --budget-used`: `minutes[id]` minutes already spent on `day`.
    public convenience init(day: Int, minutes: [String: Int]) {
        self.init()
        entries.withLock { table in
            for (service, count) in minutes {
                var set = MinuteSet()
                for slot in 0..<min(max(count, 0), MinuteSet.slots) { set.insert(slot: slot) }
                let key = Key(day: day, service: service)
                table[key] = Entry(minutes: set)
                noteOnline(key, table)
            }
        }
    }

    /// `service` was used at `unixSeconds`, on the local day `day`.
    public func record(_ service: String, at unixSeconds: Int64, day: Int) {
        let slot = MinuteSet.slot(unixSeconds: unixSeconds)
        if service == Self.online { lastOnlineMinute.store(Self.minute(unixSeconds), ordering: .relaxed) }
        let counted = entries.withLock { table -> Bool in
            let key = Key(day: day, service: service)
            // One hash of the key: a minute already counted is the common case.
            if let index = table.index(forKey: key) {
                guard !table.values[index].minutes.contains(slot: slot) else { return false }
                table.values[index].minutes.insert(slot: slot)
                table.values[index].unsaved = true
            } else {
                var entry = Entry(unsaved: true)
                entry.minutes.insert(slot: slot)
                table[key] = entry
            }
            noteOnline(key, table)
            return true
        }
        if counted, let newMinute { newMinute() }
    }

    /// Whether the minute of `unixSeconds` is already counted for `service` on `day`.
    public func isCounted(_ service: String, at unixSeconds: Int64, day: Int) -> Bool {
        if service == Self.online, lastOnlineMinute.load(ordering: .relaxed) == Self.minute(unixSeconds) {
            return true
        }
        let slot = MinuteSet.slot(unixSeconds: unixSeconds)
        return entries.withLock { $0[Key(day: day, service: service)]?.minutes.contains(slot: slot) ?? false }
    }

    /// Minutes spent on `service` on `day`.
    public func minutes(_ service: String, day: Int) -> Int {
        entries.withLock { $0[Key(day: day, service: service)]?.minutes.count ?? 0 }
    }

    /// Every service's minutes on `day`.
    public func minutes(day: Int) -> [String: Int] {
        entries.withLock { table in
            var out: [String: Int] = [:]
            for (key, entry) in table where key.day == day { out[key.service] = entry.minutes.count }
            return out
        }
    }

    /// What the store has not seen, marked seen; days before `today` are then forgotten
    /// (their minutes are in the store). A failed write gives them back with `unsaved`.
    public func takeUnsaved(today: Int) -> [(key: Key, minutes: MinuteSet)] {
        entries.withLock { table in
            var out: [(key: Key, minutes: MinuteSet)] = []
            for (key, entry) in table where entry.unsaved {
                out.append((key, entry.minutes))
                table[key]?.unsaved = false
            }
            table = table.filter { $0.key.day >= today }
            return out
        }
    }

    /// Minutes a store write did not take: kept for the next flush.
    public func unsaved(_ changes: [(key: Key, minutes: MinuteSet)]) {
        entries.withLock { table in
            for change in changes {
                table[change.key, default: Entry()].minutes.formUnion(change.minutes)
                table[change.key]?.unsaved = true
                noteOnline(change.key, table)
            }
        }
    }

    /// Minutes the shared store does not have yet, marked as had; days before `today`
    /// are left out (the shared store took them that day, or they are past mattering). A
    /// failed write gives them back with `unshared`.
    public func takeUnshared(today: Int) -> [(key: Key, minutes: MinuteSet)] {
        entries.withLock { table in
            var out: [(key: Key, minutes: MinuteSet)] = []
            for (key, entry) in table where key.day >= today {
                let new = entry.minutes.subtracting(entry.shared)
                guard !new.isEmpty else { continue }
                out.append((key, new))
                table[key]?.shared = entry.minutes
            }
            return out
        }
    }

    /// The shared store is another database: every minute is to be written again.
    public func forgetShared() {
        entries.withLock { table in
            for key in table.keys { table[key]?.shared = MinuteSet() }
        }
    }

    /// Minutes the shared store did not take: written again next time.
    public func unshared(_ changes: [(key: Key, minutes: MinuteSet)]) {
        entries.withLock { table in
            for change in changes {
                guard let entry = table[change.key] else { continue }
                table[change.key]?.shared = entry.shared.subtracting(change.minutes)
            }
        }
    }

    /// Minutes another gateway counted (from the shared store): counted here too, saved
    /// to the local store with the next flush (so a restart keeps them), never written
    /// back. Returns whether any was new here.
    @discardableResult
    public func mergeShared(_ key: Key, _ minutes: MinuteSet) -> Bool {
        entries.withLock { table in
            var entry = table[key] ?? Entry()
            entry.shared.formUnion(minutes)
            let new = minutes.subtracting(entry.minutes)
            if !new.isEmpty {
                entry.minutes.formUnion(new)
                entry.unsaved = true
            }
            table[key] = entry
            noteOnline(key, table)
            return !new.isEmpty
        }
    }

    /// Minutes read back from the store at start: already saved.
    public func restore(_ key: Key, _ minutes: MinuteSet) {
        entries.withLock { table in
            table[key, default: Entry()].minutes.formUnion(minutes)
            noteOnline(key, table)
        }
    }
}

/// The minutes of one local day as a set: one bit per minute of the Unix clock, at
/// `minute mod 1500`. A local day lasts 23 to 25 hours, so no two of its minutes share a
/// bit, and a day with a DST change counts real minutes (the repeated hour of autumn is
/// not one hour counted once).
public struct MinuteSet: Equatable, Sendable {
    public static let slots = 1500
    private static let wordCount = (slots + 63) / 64
    public private(set) var words: [UInt64]

    public init() { words = Array(repeating: 0, count: Self.wordCount) }

    /// From `bytes` (little-endian words, as `bytes` writes them); nil when the length is wrong.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.wordCount * 8 else { return nil }
        self.init()
        for (index, byte) in bytes.enumerated() { words[index / 8] |= UInt64(byte) << UInt64(8 * (index % 8)) }
    }

    public static func slot(unixSeconds: Int64) -> Int {
        let minute = unixSeconds >= 0 ? unixSeconds / 60 : (unixSeconds - 59) / 60
        let slot = Int(minute % Int64(slots))
        return slot < 0 ? slot + slots : slot
    }

    public func contains(slot: Int) -> Bool { words[slot / 64] & (1 << UInt64(slot % 64)) != 0 }

    public mutating func insert(slot: Int) { words[slot / 64] |= 1 << UInt64(slot % 64) }

    public mutating func formUnion(_ other: MinuteSet) {
        for index in words.indices { words[index] |= other.words[index] }
    }

    /// The minutes of this set that are not in `other`.
    public func subtracting(_ other: MinuteSet) -> MinuteSet {
        var out = self
        for index in words.indices { out.words[index] &= ~other.words[index] }
        return out
    }

    public var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

    /// The minutes in the set, as slots, in order.
    public var slots: [Int] {
        var out: [Int] = []
        for (index, word) in words.enumerated() where word != 0 {
            for bit in 0..<64 where word & (1 << UInt64(bit)) != 0 { out.append(index * 64 + bit) }
        }
        return out
    }

    public func union(_ other: MinuteSet) -> MinuteSet {
        var out = self
        out.formUnion(other)
        return out
    }

    public var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }

    public var bytes: [UInt8] {
        words.flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> UInt64(8 * $0)) } }
    }
}
