import Glibc
import Policy
import SystemIO

/// The events a drain took, in the order they came within each shard: read one at a time
/// by the flush, each made from its window's bytes when read. The pages are given back to
/// the kernel when the last copy of the window goes.
public struct HitWindow: RandomAccessCollection, Sendable {
    let parts: [WindowPages]
    /// Where each part's events end, counted over the parts before it.
    private let ends: [Int]

    init(_ parts: [WindowPages]) {
        self.parts = parts
        var total = 0
        ends = parts.map { part in
            total += part.count
            return total
        }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { ends.last ?? 0 }

    public subscript(position: Int) -> HitAggregator.Event {
        precondition(position >= 0 && position < endIndex, "hit window index \(position) out of 0..<\(endIndex)")
        var part = 0
        while position >= ends[part] { part += 1 }
        return parts[part].event(position - (part == 0 ? 0 : ends[part - 1]))
    }

    /// Every event's profile and name, read in place, with its folded names (0 for the name
    /// asked), in the order of the events: what the flush's name rate looks at.
    public func forEachName(
        _ body: (_ profile: UnsafeRawBufferPointer, _ name: UnsafeRawBufferPointer, _ names: Int) -> Void
    ) {
        for part in parts {
            for index in 0..<part.count { part.name(index, body) }
        }
    }

    /// Every event's profile and reason text, read in place from the window's bytes, with
    /// its category and count, in the order of the events: what the flush counts per
    /// profile, without making each event (its identity copied, its texts and rule made
    /// into strings).
    public func forEachTally(
        _ body: (_ profile: UnsafeRawBufferPointer, _ reason: UnsafeRawBufferPointer, Category?, _ count: Int) -> Void
    ) {
        for part in parts {
            for index in 0..<part.count { part.tally(index, body) }
        }
    }
}

/// One shard's events of one window, in pages of its own (`PageRegion`), not in malloc's
/// heap (docs/performance.md#the-heap-by-owner): after a burst a window holds thousands of
/// events, made on a loop thread among the answers it caches; freed there, they left the
/// arena's pages resident around the answers still cached. Three regions: the events as
/// fixed records in the order they came, their identity and rule bytes, and a table of
/// record numbers by the identity's hash (open addressing, at most three quarters full).
///
/// Not synchronised: the shard's lock, then the one thread flushing the window.
final class WindowPages: @unchecked Sendable {
    struct Record {
        var count: Int
        var firstSeen: Int64
        var lastSeen: Int64
        /// Offset and length of the identity in `bytes`.
        var identity: UInt32
        var identityLength: UInt32
        /// Offset of the rule in `bytes`, its length (`noRule`: none) and the bytes kept
        /// for it there: a rule that changes is written over the old one when it fits.
        var rule: UInt32
        var hash: UInt32
        var ruleLength: UInt16
        var ruleRoom: UInt16
        /// `Category.rawValue + 1`; 0 for none.
        var category: UInt8
        /// Names folded into the event (its identity's name `*.RULE`), up to 65,535; 0 for
        /// the name asked. In the record's padding: the stride stays 48 bytes.
        var names: UInt16

        /// The category `category` stands for.
        var categoryValue: Category? { category == 0 ? nil : Category(rawValue: Int(category) - 1) }
    }

    static let recordSize = MemoryLayout<Record>.stride
    static let noRule = UInt16.max

    private let records = PageRegion()
    private let bytes = PageRegion()
    private var slots = PageRegion()
    private(set) var count = 0
    private(set) var bytesUsed = 0
    private var slotCount = 0
    /// Times the slot table was rebuilt larger (tests count them, with `mappings`).
    private(set) var rehashes = 0

    /// Events the records have room for.
    var capacity: Int { records.capacity / Self.recordSize }

    /// `mmap` and `mremap` calls made for this window's storage so far.
    var mappings: Int { records.mappings + bytes.mappings + slots.mappings + retiredMappings }
    /// Those of slot tables replaced since.
    private var retiredMappings = 0

    /// An empty window; its pages are mapped by the first events.
    init() {}

    /// An empty window with room for `events` events of `identityBytes` bytes in all, mapped
    /// now, by the caller: a window as big as the one before it then costs the threads that
    /// record into it no `mmap` or `mremap` and no rebuilt table (at 4,096 events a rebuild
    /// is some tens of microseconds). Why: those fell on a loop thread in the middle of
    /// answering a blocked query (docs/performance.md#where-the-slow-answers-are). The
    /// pages are still faulted in by the first write to each: mapped ahead and faulted in
    /// too, a window held its pages when it stayed empty, and the daemon about 0.7 MB more
    /// after the benchmark's load.
    init(events: Int, identityBytes: Int) {
        guard events > 0 else { return }
        records.reserve(events * Self.recordSize)
        bytes.reserve(max(identityBytes, 1))
        var table = Self.firstTableSlots
        while Self.crowded(events: events, slots: table) { table *= 2 }
        slots.reserve(table * 4)
        slotCount = table
    }

    /// The slot table's first size, doubled whenever it gets crowded.
    static let firstTableSlots = 64

    /// Whether a table of `slots` slots is too full for `events` events (over three
    /// quarters): one rule for the table a window grows and the one a drain maps ahead.
    @inline(__always)
    static func crowded(events: Int, slots: Int) -> Bool { events * 4 > slots * 3 }

    /// Adds one event's counts to the event with this identity, or makes it when the
    /// window holds fewer than `limit` events; false when it does not (nothing changed). The
    /// rule (if any) replaces the event's when `replacingRule`, else only fills a missing
    /// one; the category likewise. `names` adds to the event's folded names.
    @discardableResult
    func add(
        identity: UnsafeRawBufferPointer, rule: UnsafeRawBufferPointer?, replacingRule: Bool, category: Category?,
        count added: Int, firstSeen: Int64, lastSeen: Int64, names: Int = 0, limit: Int = .max
    ) -> Bool {
        var hasher = Hasher()
        hasher.combine(bytes: identity)
        let hash = UInt32(truncatingIfNeeded: hasher.finalize())
        let code = category.map { UInt8($0.rawValue + 1) } ?? 0
        if let index = find(identity, hash: hash) {
            var record = self.record(index)
            record.count += added
            record.firstSeen = min(record.firstSeen, firstSeen)
            record.lastSeen = max(record.lastSeen, lastSeen)
            if let rule, replacingRule || record.ruleLength == Self.noRule { setRule(&record, rule) }
            if code != 0, replacingRule || record.category == 0 { record.category = code }
            record.names = UInt16(clamping: Int(record.names) + names)
            store(record, at: index)
            return true
        }
        guard count < limit else { return false }
        if Self.crowded(events: count + 1, slots: slotCount) {
            rehash(slots: max(Self.firstTableSlots, slotCount * 2))
        }
        let offset = append(identity)
        var record = Record(
            count: added, firstSeen: firstSeen, lastSeen: lastSeen, identity: offset,
            identityLength: UInt32(identity.count), rule: 0, hash: hash, ruleLength: Self.noRule, ruleRoom: 0,
            category: code, names: UInt16(clamping: names))
        if let rule { setRule(&record, rule) }
        records.reserve((count + 1) * Self.recordSize)
        store(record, at: count)
        insert(count, hash: hash)
        count += 1
        return true
    }

    /// The event at `index`, its identity copied and its rule made into a string.
    func event(_ index: Int) -> HitAggregator.Event {
        let record = record(index)
        let identity = Array(slice(record.identity, Int(record.identityLength)))
        let rule =
            record.ruleLength == Self.noRule
            ? nil : String(decoding: slice(record.rule, Int(record.ruleLength)), as: UTF8.self)
        return HitAggregator.Event(
            identity: HitAggregator.Identity(bytes: identity), rule: rule,
            category: record.categoryValue, count: record.count, firstSeen: record.firstSeen, lastSeen: record.lastSeen,
            names: Int(record.names))
    }

    /// The profile and name texts of the event at `index` (the first two fields of its
    /// identity) and its folded names.
    func name(_ index: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, Int) -> Void) {
        let record = record(index)
        let texts = HitIdentity.texts(slice(record.identity, Int(record.identityLength)))
        body(texts.profile, texts.name, Int(record.names))
    }

    /// The profile and reason texts of the event at `index` (the first and third fields of
    /// its identity, as `HitIdentity.append` writes them), its category and count.
    func tally(
        _ index: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, Category?, Int) -> Void
    ) {
        let record = record(index)
        let texts = HitIdentity.texts(slice(record.identity, Int(record.identityLength)))
        body(texts.profile, texts.reason, record.categoryValue, record.count)
    }

    private func find(_ identity: UnsafeRawBufferPointer, hash: UInt32) -> Int? {
        guard slotCount > 0, let table = slots.base else { return nil }
        var slot = Int(hash) & (slotCount - 1)
        while true {
            let entry = table.load(fromByteOffset: slot * 4, as: UInt32.self)
            guard entry != 0 else { return nil }
            let index = Int(entry - 1)
            let record = record(index)
            if record.hash == hash, Int(record.identityLength) == identity.count,
                identity.isEmpty
                    || memcmp(bytes.base! + Int(record.identity), identity.baseAddress!, identity.count) == 0
            {
                return index
            }
            slot = (slot + 1) & (slotCount - 1)
        }
    }

    private func insert(_ index: Int, hash: UInt32) {
        let table = slots.base!
        var slot = Int(hash) & (slotCount - 1)
        while table.load(fromByteOffset: slot * 4, as: UInt32.self) != 0 { slot = (slot + 1) & (slotCount - 1) }
        table.storeBytes(of: UInt32(index + 1), toByteOffset: slot * 4, as: UInt32.self)
    }

    /// A new table of `count` slots (fresh pages read as zero: all empty), every event
    /// inserted again; the old table's pages go back.
    private func rehash(slots count: Int) {
        if slotCount > 0 { rehashes += 1 }
        retiredMappings += slots.mappings
        slots = PageRegion()
        slots.reserve(count * 4)
        slotCount = count
        for index in 0..<self.count { insert(index, hash: record(index).hash) }
    }

    /// Rules are names (at most 253 bytes) or service ids; anything longer than a record
    /// can say is cut at 65,534 bytes.
    private func setRule(_ record: inout Record, _ rule: UnsafeRawBufferPointer) {
        let length = min(rule.count, Int(Self.noRule) - 1)
        if record.ruleLength != Self.noRule, length == Int(record.ruleLength),
            memcmp(bytes.base! + Int(record.rule), rule.baseAddress!, length) == 0
        {
            return
        }
        if length > Int(record.ruleRoom) {
            record.rule = append(UnsafeRawBufferPointer(rebasing: rule[..<length]))
            record.ruleRoom = UInt16(length)
        } else if length > 0 {
            (bytes.base! + Int(record.rule)).copyMemory(from: rule.baseAddress!, byteCount: length)
        }
        record.ruleLength = UInt16(length)
    }

    private func append(_ data: UnsafeRawBufferPointer) -> UInt32 {
        let offset = bytesUsed
        bytes.reserve(offset + data.count)
        if !data.isEmpty { (bytes.base! + offset).copyMemory(from: data.baseAddress!, byteCount: data.count) }
        bytesUsed += data.count
        return UInt32(offset)
    }

    private func slice(_ offset: UInt32, _ length: Int) -> UnsafeRawBufferPointer {
        guard length > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(start: bytes.base! + Int(offset), count: length)
    }

    private func record(_ index: Int) -> Record {
        records.base!.load(fromByteOffset: index * Self.recordSize, as: Record.self)
    }

    private func store(_ record: Record, at index: Int) {
        records.base!.storeBytes(of: record, toByteOffset: index * Self.recordSize, as: Record.self)
    }
}
