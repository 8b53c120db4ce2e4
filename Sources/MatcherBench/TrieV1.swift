import DomainMatch

// `trie-v1`: the label trie of compiled-file format 1, as it was before format 2, kept
// only so `bench matcher` can measure today's trie beside the new one in the same run
// (speed, bytes per name, load time). Copied from Sources/DomainMatch at that version,
// types renamed; the daemon never reads this format any more.

extension TrieBytes {
    @inline(__always)
    fileprivate func u8(_ offset: Int) -> UInt8 { base.load(fromByteOffset: offset, as: UInt8.self) }
    @inline(__always)
    fileprivate func u16(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always)
    fileprivate func u32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    @inline(__always)
    fileprivate func u64(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}

/// The compiled trie's byte layout, shared by the in-memory image and the file
/// (docs/blocklists.md): little-endian, position-independent, a header, a section table, sections.
///
/// ```
/// header (64 bytes)
///   0  magic "PGTRIE\r\n"       8  format version (u32)   12 section count (u32)
///   16 checksum of the whole file but these 8 bytes (u64)  24 file size (u64)
///   32 input key (u64)          40 node count (u32)       44 slot capacity (u32)
///   48 list count (u32)         52 name count (u32)       56 reserved (8)
/// section table: count × { kind u32, reserved u32, offset u64, length u64 }
/// sections (8-byte aligned): slots, label pool, list names
/// ```
/// A slot is 12 bytes: parent node id (u32, 0 = root, else slot index + 1), label (u32:
/// bytes inline when the label has ≤ 4 bytes, else an offset in the label pool), label
/// length (u8, 0 = empty slot), fingerprint (u8, low hash byte), list mask (u16).
enum TrieV1Layout {
    static let magic: [UInt8] = Array("PGTRIE\r\n".utf8)
    static let version: UInt32 = 1
    static let headerSize = 64
    static let sectionEntrySize = 24
    static let slotSize = 12
    static let maxLists = 16

    typealias Section = TrieLayout.Section

    /// Slots per node: a load of 3/4 keeps linear probes short and the file small.
    static func capacity(forNodes nodes: Int) -> Int { max(8, nodes + nodes / 3 + 1) }

    static func align8(_ value: Int) -> Int { (value + 7) & ~7 }
}

/// The checksum over a byte range: 64-bit, word at a time, with fixed constants.
enum TrieV1Checksum {
    /// The checksum of a whole image, skipping the 8 bytes at 16 where it is stored.
    static func image(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let head = compute(UnsafeRawBufferPointer(rebasing: bytes[0..<16]))
        let rest = compute(UnsafeRawBufferPointer(rebasing: bytes[24...]))
        var h = head &* 0x9E37_79B9_7F4A_7C15 ^ rest
        h ^= h >> 32
        return h
    }

    static func compute(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var a: UInt64 = 0x243F_6A88_85A3_08D3
        var b: UInt64 = 0x1319_8A2E_0370_7344
        var offset = 0
        let count = bytes.count
        guard let base = bytes.baseAddress else { return a ^ b }
        while offset + 16 <= count {
            a =
                (a ^ UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                &* 0x9E37_79B9_7F4A_7C15
            b =
                (b ^ UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
                &* 0xC2B2_AE3D_27D4_EB4F
            a = (a << 27) | (a >> 37)
            b = (b << 31) | (b >> 33)
            offset += 16
        }
        while offset < count {
            a = (a ^ UInt64(base.load(fromByteOffset: offset, as: UInt8.self))) &* 0x9E37_79B9_7F4A_7C15
            offset += 1
        }
        var h = a ^ (b &* 0xFF51_AFD7_ED55_8CCD) ^ UInt64(count)
        h ^= h >> 33
        h = h &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }
}

/// The trie's hash of (parent node, label): fixed constants, so a compiled file built by
/// one process is read the same way by every other (Swift's `Hasher` is seeded per
/// process and cannot be used here).
enum TrieV1Hash {
    /// Hash and packed form of one label. `packed` holds labels of up to 4 bytes inline
    /// (little-endian), which is how short labels are stored in a slot.
    @inline(__always)
    static func hash(_ base: UnsafeRawPointer, _ length: Int, parent: UInt32) -> (hash: UInt64, packed: UInt32) {
        var h = UInt64(parent) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(length)
        var offset = 0
        while offset + 8 <= length {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            h = (h ^ word) &* 0xFF51_AFD7_ED55_8CCD
            h ^= h >> 31
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < length {
            tail |= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) << shift
            shift += 8
            offset += 1
        }
        h = (h ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        h = h &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 29
        return (h, length <= 4 ? UInt32(truncatingIfNeeded: tail) : 0)
    }

    /// The slot a hash lands on, in `0..<capacity` (multiply-shift, no modulo).
    @inline(__always)
    static func slot(_ hash: UInt64, capacity: Int) -> Int {
        Int(truncatingIfNeeded: hash.multipliedFullWidth(by: UInt64(capacity)).high)
    }

    @inline(__always)
    static func fingerprint(_ hash: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: hash) }
}

/// Writable access to a region of trie slots (`TrieV1Layout`): the builder's working table
/// and the slot section of the image it finally writes.
struct TrieV1Slots {
    let base: UnsafeMutableRawPointer
    let capacity: Int

    @inline(__always) func length(_ index: Int) -> Int {
        Int(base.load(fromByteOffset: index * 12 + 8, as: UInt8.self))
    }
    @inline(__always) func parent(_ index: Int) -> UInt32 { read32(index * 12) }
    @inline(__always) func label(_ index: Int) -> UInt32 { read32(index * 12 + 4) }
    @inline(__always) func fingerprint(_ index: Int) -> UInt8 {
        base.load(fromByteOffset: index * 12 + 9, as: UInt8.self)
    }
    @inline(__always) func mask(_ index: Int) -> UInt16 {
        UInt16(littleEndian: base.loadUnaligned(fromByteOffset: index * 12 + 10, as: UInt16.self))
    }

    @inline(__always) private func read32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    func set(_ index: Int, parent: UInt32, label: UInt32, length: Int, fingerprint: UInt8, mask: UInt16) {
        let offset = index * 12
        base.storeBytes(of: parent.littleEndian, toByteOffset: offset, as: UInt32.self)
        base.storeBytes(of: label.littleEndian, toByteOffset: offset + 4, as: UInt32.self)
        base.storeBytes(of: UInt8(length), toByteOffset: offset + 8, as: UInt8.self)
        base.storeBytes(of: fingerprint, toByteOffset: offset + 9, as: UInt8.self)
        base.storeBytes(of: mask.littleEndian, toByteOffset: offset + 10, as: UInt16.self)
    }

    @inline(__always)
    func setMask(_ index: Int, _ mask: UInt16) {
        base.storeBytes(of: mask.littleEndian, toByteOffset: index * 12 + 10, as: UInt16.self)
    }

    /// The first empty slot from the hash's home, for a key known to be absent.
    @inline(__always)
    func emptySlot(from hash: UInt64) -> Int {
        var index = TrieV1Hash.slot(hash, capacity: capacity)
        while length(index) != 0 {
            index += 1
            if index == capacity { index = 0 }
        }
        return index
    }
}

/// Checking and writing the header and section table of a compiled trie image.
enum TrieV1Image {
    struct Layout {
        var listCount = 0, nodeCount = 0, nameCount = 0, capacity = 0
        var slots = 0, labels = 0, labelsLength = 0
        var listNames: [String] = []
        var inputKey: UInt64 = 0
    }

    static func validate(_ bytes: TrieBytes, verifyChecksum: Bool) throws(TrieImageError) -> Layout {
        let size = bytes.count
        guard size >= TrieV1Layout.headerSize else { throw .tooShort(size: size) }
        guard UnsafeRawBufferPointer(start: bytes.base, count: 8).elementsEqual(TrieV1Layout.magic) else {
            throw .badMagic
        }
        let version = bytes.u32(8)
        guard version == TrieV1Layout.version else { throw .unsupportedVersion(version) }
        let declared = bytes.u64(24)
        guard declared == UInt64(size) else { throw .sizeMismatch(header: declared, actual: size) }
        let sectionCount = Int(bytes.u32(12))
        guard sectionCount <= 16, TrieV1Layout.headerSize + sectionCount * TrieV1Layout.sectionEntrySize <= size else {
            throw .badSection(kind: 0, reason: "section table of \(sectionCount) entries does not fit")
        }
        var found: [TrieLayout.Section: (offset: Int, length: Int)] = [:]
        for index in 0..<sectionCount {
            let entry = TrieV1Layout.headerSize + index * TrieV1Layout.sectionEntrySize
            let kind = bytes.u32(entry)
            let offset = bytes.u64(entry + 8)
            let length = bytes.u64(entry + 16)
            guard offset <= UInt64(size), length <= UInt64(size) - offset else {
                throw .badSection(kind: kind, reason: "offset \(offset) + length \(length) past the end (\(size))")
            }
            if let section = TrieLayout.Section(rawValue: kind) { found[section] = (Int(offset), Int(length)) }
        }
        if verifyChecksum {
            let stored = bytes.u64(16)
            let computed = TrieV1Checksum.image(bytes.buffer)
            guard stored == computed else { throw .checksumMismatch(stored: stored, computed: computed) }
        }
        for section in TrieLayout.Section.allCases where found[section] == nil { throw .missingSection(section) }
        var layout = Layout()
        layout.nodeCount = Int(bytes.u32(40))
        layout.capacity = Int(bytes.u32(44))
        layout.listCount = Int(bytes.u32(48))
        layout.nameCount = Int(bytes.u32(52))
        layout.inputKey = bytes.u64(32)
        guard layout.listCount <= TrieV1Layout.maxLists else {
            throw .badCounts("\(layout.listCount) lists, at most 16")
        }
        guard layout.nodeCount < layout.capacity || layout.capacity == 0 else {
            throw .badCounts("\(layout.nodeCount) nodes in \(layout.capacity) slots")
        }
        let slots = found[.slots]!
        let labels = found[.labels]!
        let names = found[.listNames]!
        guard slots.length == layout.capacity * TrieV1Layout.slotSize else {
            throw .badSection(
                kind: TrieLayout.Section.slots.rawValue, reason: "\(slots.length) bytes for \(layout.capacity) slots")
        }
        layout.slots = slots.offset
        layout.labels = labels.offset
        layout.labelsLength = labels.length
        let nameText = String(
            decoding: UnsafeRawBufferPointer(rebasing: bytes.buffer[names.offset..<(names.offset + names.length)]),
            as: UTF8.self)
        layout.listNames =
            nameText.isEmpty ? [] : nameText.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard layout.listNames.count == layout.listCount else {
            throw .badCounts("\(layout.listNames.count) list names for \(layout.listCount) lists")
        }
        return layout
    }
}

/// The fast matcher (docs/decisions.md#matching): a trie over labels from the right (`com` → `example` →
/// `www`) stored as one open-addressed table of 12-byte slots keyed by (parent, label),
/// plus a pool of label bytes. A lookup walks the query's labels once, right to left,
/// on its bytes, without allocating: one hash and one or two cache lines per label.
///
/// The same bytes are built in memory or mapped from a compiled file (`TrieV1Layout`).
/// Every read is bounds-checked against the image, so even a file changed under the
/// mapping cannot make a lookup read outside it or loop forever.
public struct TrieV1: NameMatcher {
    public let bytes: TrieBytes
    public let listCount: Int
    let nodeCount: Int
    let nameCount: Int
    /// Names of the lists, in list order (category ids for the category trie).
    let listNames: [String]
    let inputKey: UInt64
    let slots: Int
    let capacity: Int
    let labels: Int
    let labelsLength: Int

    /// Reads and checks an image: header, version and section bounds always; the full
    /// checksum when `verifyChecksum` (docs/blocklists.md: when written and when first used).
    public init(_ bytes: TrieBytes, verifyChecksum: Bool) throws(TrieImageError) {
        let layout = try TrieV1Image.validate(bytes, verifyChecksum: verifyChecksum)
        self.bytes = bytes
        listCount = layout.listCount
        nodeCount = layout.nodeCount
        nameCount = layout.nameCount
        listNames = layout.listNames
        inputKey = layout.inputKey
        slots = layout.slots
        capacity = layout.capacity
        labels = layout.labels
        labelsLength = layout.labelsLength
    }

    public func match(_ name: DomainName, into depths: inout MatchDepths) {
        for list in 0..<listCount { depths[list] = 0 }
        guard capacity > 0 else { return }
        name.bytes.withUnsafeBytes { walk($0, into: &depths) }
    }

    @inline(__always)
    private func walk(_ name: UnsafeRawBufferPointer, into depths: inout MatchDepths) {
        guard let base = name.baseAddress else { return }
        var parent: UInt32 = 0
        var end = name.count
        var depth = 0
        while end > 0 {
            var start = end
            while start > 0, base.load(fromByteOffset: start - 1, as: UInt8.self) != UInt8(ascii: ".") { start -= 1 }
            let length = end - start
            guard length > 0, length <= 255,
                let node = find(base + start, length, parent: parent)
            else { return }
            depth += 1
            var mask = bytes.u16(slots + node * TrieV1Layout.slotSize + 10)
            while mask != 0 {
                let list = mask.trailingZeroBitCount
                if list < listCount { depths[list] = depth }
                mask &= mask - 1
            }
            parent = UInt32(node + 1)
            end = start - 1
        }
    }

    /// The slot index of (parent, label), or nil. Probes at most `capacity` slots.
    @inline(__always)
    private func find(_ label: UnsafeRawPointer, _ length: Int, parent: UInt32) -> Int? {
        let (hash, packed) = TrieV1Hash.hash(label, length, parent: parent)
        let fingerprint = TrieV1Hash.fingerprint(hash)
        var index = TrieV1Hash.slot(hash, capacity: capacity)
        for _ in 0..<capacity {
            let offset = slots + index * TrieV1Layout.slotSize
            let slotLength = Int(bytes.u8(offset + 8))
            if slotLength == 0 { return nil }
            if slotLength == length, bytes.u8(offset + 9) == fingerprint, bytes.u32(offset) == parent,
                labelEquals(bytes.u32(offset + 4), label, length, packed)
            {
                return index
            }
            index += 1
            if index == capacity { index = 0 }
        }
        return nil
    }

    @inline(__always)
    private func labelEquals(_ stored: UInt32, _ label: UnsafeRawPointer, _ length: Int, _ packed: UInt32) -> Bool {
        if length <= 4 { return stored == packed }
        let offset = Int(stored)
        guard offset + length <= labelsLength else { return false }
        return v1MemoryEqual(bytes.base + labels + offset, label, length)
    }
}

@inline(__always)
func v1MemoryEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
    var offset = 0
    while offset + 8 <= count {
        if a.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            != b.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        {
            return false
        }
        offset += 8
    }
    while offset < count {
        if a.load(fromByteOffset: offset, as: UInt8.self) != b.load(fromByteOffset: offset, as: UInt8.self) {
            return false
        }
        offset += 1
    }
    return true
}

/// Builds a `TrieV1` from names, in memory: an open-addressed working table that
/// grows by rehashing in insertion order (a child's hash depends on its parent's slot,
/// so parents must move first), then one final rehash into an exactly sized image.
///
/// Memory stays near the finished structure (docs/benchmarks.md#targets: build peak ≤ 3×): the working
/// table, the label pool and a 4-byte insertion order per node, and no `String` or
/// array per name.
struct TrieV1Builder {
    let listCount: Int
    private(set) var nodeCount = 0
    /// Distinct (name, list) pairs.
    private(set) var nameCount = 0
    private var work: TrieV1WorkTable
    private var pool: [UInt8] = []
    private var order: [UInt32] = []

    /// `expectedNames` sizes the first table (it grows when more come).
    init(listCount: Int, expectedNames: Int = 0) {
        precondition(listCount >= 1 && listCount <= TrieV1Layout.maxLists, "1 to 16 lists")
        self.listCount = listCount
        work = TrieV1WorkTable(capacity: TrieV1Layout.capacity(forNodes: max(16, expectedNames + expectedNames / 4)))
        order.reserveCapacity(expectedNames + expectedNames / 4)
        // Reserved, not touched: untouched pages cost no resident memory, and the pool
        // never has to be copied while it grows.
        pool.reserveCapacity(expectedNames * 16)
    }

    mutating func insert(_ name: DomainName, list: Int) {
        name.bytes.withUnsafeBytes { insert($0, list: list) }
    }

    /// Inserts a valid lowercase dotted name (as `ListItem.name` gives it).
    mutating func insert(_ name: UnsafeRawBufferPointer, list: Int) {
        precondition(list >= 0 && list < listCount)
        guard let base = name.baseAddress, name.count > 0 else { return }
        var parent: UInt32 = 0
        var end = name.count
        var node = -1
        while end > 0 {
            var start = end
            while start > 0, base.load(fromByteOffset: start - 1, as: UInt8.self) != UInt8(ascii: ".") { start -= 1 }
            node = findOrInsert(base + start, end - start, parent: parent)
            parent = UInt32(node + 1)
            end = start - 1
        }
        let bit = UInt16(1) << UInt16(list)
        let mask = work.table.mask(node)
        if mask & bit == 0 {
            work.table.setMask(node, mask | bit)
            nameCount += 1
        }
    }

    private mutating func findOrInsert(_ label: UnsafeRawPointer, _ length: Int, parent: UInt32) -> Int {
        let (hash, packed) = TrieV1Hash.hash(label, length, parent: parent)
        let fingerprint = TrieV1Hash.fingerprint(hash)
        let table = work.table
        var index = TrieV1Hash.slot(hash, capacity: table.capacity)
        while table.length(index) != 0 {
            if table.length(index) == length, table.fingerprint(index) == fingerprint, table.parent(index) == parent,
                labelEquals(table.label(index), label, length, packed)
            {
                return index
            }
            index += 1
            if index == table.capacity { index = 0 }
        }
        if (nodeCount + 1) * 5 > table.capacity * 4 {
            grow()
            return findOrInsert(label, length, parent: remappedParent(parent))
        }
        var stored = packed
        if length > 4 {
            stored = UInt32(pool.count)
            pool.append(contentsOf: UnsafeRawBufferPointer(start: label, count: length))
        }
        table.set(index, parent: parent, label: stored, length: length, fingerprint: fingerprint, mask: 0)
        order.append(UInt32(index))
        nodeCount += 1
        return index
    }

    private func labelEquals(_ stored: UInt32, _ label: UnsafeRawPointer, _ length: Int, _ packed: UInt32) -> Bool {
        if length <= 4 { return stored == packed }
        return pool.withUnsafeBytes { v1MemoryEqual($0.baseAddress! + Int(stored), label, length) }
    }

    /// After `grow`, the parent id passed down is stale: map it through the new order.
    private var lastRemap: [UInt32] = []
    private func remappedParent(_ parent: UInt32) -> UInt32 {
        parent == 0 ? 0 : lastRemap[Int(parent) - 1] + 1
    }

    private mutating func grow() {
        let bigger = TrieV1WorkTable(capacity: work.table.capacity * 3 / 2 + 16)
        lastRemap = rehash(into: bigger.table)
        work = bigger
    }

    /// Moves every node into `target` in insertion order; returns old slot → new slot.
    private mutating func rehash(into target: TrieV1Slots) -> [UInt32] {
        let source = work.table
        var remap = [UInt32](repeating: 0, count: source.capacity)
        for position in order.indices {
            let old = Int(order[position])
            let oldParent = source.parent(old)
            let parent = oldParent == 0 ? 0 : remap[Int(oldParent) - 1] + 1
            let length = source.length(old)
            let label = source.label(old)
            let hash = pool.withUnsafeBytes { pool -> UInt64 in
                if length <= 4 {
                    return withUnsafeBytes(of: label.littleEndian) {
                        TrieV1Hash.hash($0.baseAddress!, length, parent: parent).hash
                    }
                }
                return TrieV1Hash.hash(pool.baseAddress! + Int(label), length, parent: parent).hash
            }
            let slot = target.emptySlot(from: hash)
            target.set(
                slot, parent: parent, label: label, length: length, fingerprint: TrieV1Hash.fingerprint(hash),
                mask: source.mask(old))
            remap[old] = UInt32(slot)
            order[position] = UInt32(slot)
        }
        return remap
    }

    /// The finished image, sized for the nodes there are. `listNames` label the lists
    /// (category ids); `inputKey` identifies the inputs for a cache.
    mutating func build(listNames: [String], inputKey: UInt64 = 0) -> TrieBytes {
        precondition(listNames.count == listCount)
        let capacity = TrieV1Layout.capacity(forNodes: nodeCount)
        let names = Array(listNames.joined(separator: "\n").utf8)
        let tableEnd = TrieV1Layout.headerSize + 3 * TrieV1Layout.sectionEntrySize
        let slotsAt = TrieV1Layout.align8(tableEnd)
        let labelsAt = TrieV1Layout.align8(slotsAt + capacity * TrieV1Layout.slotSize)
        let namesAt = TrieV1Layout.align8(labelsAt + pool.count)
        let size = namesAt + names.count
        let image = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        image.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        _ = rehash(into: TrieV1Slots(base: image + slotsAt, capacity: capacity))
        pool.withUnsafeBytes { (image + labelsAt).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        names.withUnsafeBytes { (image + namesAt).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }

        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            image.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        }
        TrieV1Layout.magic.withUnsafeBytes { image.copyMemory(from: $0.baseAddress!, byteCount: 8) }
        put(TrieV1Layout.version, at: 8)
        put(UInt32(3), at: 12)
        put(UInt64(size), at: 24)
        put(inputKey, at: 32)
        put(UInt32(nodeCount), at: 40)
        put(UInt32(capacity), at: 44)
        put(UInt32(listCount), at: 48)
        put(UInt32(nameCount), at: 52)
        let sections: [(TrieLayout.Section, Int, Int)] = [
            (.slots, slotsAt, capacity * TrieV1Layout.slotSize),
            (.labels, labelsAt, pool.count), (.listNames, namesAt, names.count),
        ]
        for (index, (section, offset, length)) in sections.enumerated() {
            let entry = TrieV1Layout.headerSize + index * TrieV1Layout.sectionEntrySize
            put(section.rawValue, at: entry)
            put(UInt64(offset), at: entry + 8)
            put(UInt64(length), at: entry + 16)
        }
        put(TrieV1Checksum.image(UnsafeRawBufferPointer(start: image, count: size)), at: 16)
        return TrieBytes(base: UnsafeRawPointer(image), count: size) { pointer, _ in
            UnsafeMutableRawPointer(mutating: pointer).deallocate()
        }
    }
}

/// The builder's working slots, freed when replaced.
final class TrieV1WorkTable {
    let table: TrieV1Slots

    init(capacity: Int) {
        let base = UnsafeMutableRawPointer.allocate(byteCount: capacity * TrieV1Layout.slotSize, alignment: 16)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * TrieV1Layout.slotSize)
        table = TrieV1Slots(base: base, capacity: capacity)
    }

    deinit { table.base.deallocate() }
}

extension TrieV1 {
    /// A trie built in memory from lists of names, e.g. the parent's lists.
    public init(lists: [[DomainName]], listNames: [String]? = nil) {
        var builder = TrieV1Builder(listCount: max(1, lists.count), expectedNames: lists.reduce(0) { $0 + $1.count })
        for (list, names) in lists.enumerated() {
            for name in names { builder.insert(name, list: list) }
        }
        let labels = listNames ?? (0..<max(1, lists.count)).map { "list\($0)" }
        // Cannot fail: the image was just built by this process.
        self = try! TrieV1(builder.build(listNames: labels), verifyChecksum: false)
    }
}
