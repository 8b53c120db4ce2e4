import DomainMatch

// `trie-v2`: the label trie of compiled-file format 2, as it was before format 3, kept
// only so `bench matcher` can measure today's trie beside the new one in the same run
// (speed, bytes per name, load time). Copied from Sources/DomainMatch at that version,
// types renamed; the daemon never reads this format any more.

extension TrieBytes {
    @inline(__always)
    fileprivate func u8(_ offset: Int) -> UInt8 { base.load(fromByteOffset: offset, as: UInt8.self) }
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
/// (docs/blocklists.md#compiled-lists): little-endian, position-independent, a header, a
/// section table, sections.
///
/// ```
/// header (64 bytes)
///   0  magic "PGTRIE\r\n"       8  format version (u32)   12 section count (u32)
///   16 checksum of the whole file but these 8 bytes (u64)  24 file size (u64)
///   32 input key (u64)          40 node count (u32)       44 home slots (u32)
///   48 list count (u32)         52 name count (u32)       56 table slots (u32)  60 reserved (4)
/// section table: count × { kind u32, reserved u32, offset u64, length u64 }
/// sections (8-byte aligned): slots, label records, list names
/// ```
/// A node is one suffix of a listed name (`com`, `example.com`, …); its hash chains the
/// labels from the right (`TrieV2Hash`). A slot is 12 bytes: check (u32: 32 bits of the
/// hash, 0 = empty), parent (u32: the parent's slot + 1, 0 = a top-level label), ref (u32).
/// The slots are ordered by check, each at or after its home slot (`TrieV2Hash.home`), so a
/// probe stops at the first larger check or empty slot.
///
/// ref: bit 31 inline (bits 24–25 the length, 1 to 3, and bits 0–23 the bytes), bit 30
/// terminal (a listed name ends here), bit 29 ambiguous (a sibling has the same check:
/// compare the bytes before following it); otherwise bits 0–28 are the offset of the
/// node's record in the label section: the list mask when terminal (0 bytes for one list,
/// 1 for up to 8, else 2), the label length (u8), the label bytes. Records without a mask
/// are shared by every node with the same label. A terminal inline node
/// occurs only with one list, whose mask is implied.
enum TrieV2Layout {
    static let magic: [UInt8] = Array("PGTRIE\r\n".utf8)
    /// 2: slots ordered by a chained suffix hash, label bytes out of the slot (1: slots
    /// keyed by parent slot and label, probed with wrap-around).
    static let version: UInt32 = 2
    static let headerSize = 64
    static let sectionEntrySize = 24
    static let slotSize = 12
    static let maxLists = 16

    static let inlineBit: UInt32 = 1 << 31
    static let terminalBit: UInt32 = 1 << 30
    static let ambiguousBit: UInt32 = 1 << 29
    static let offsetMask: UInt32 = (1 << 29) - 1

    enum Section: UInt32, CaseIterable, Sendable {
        case slots = 1
        case labels = 2
        case listNames = 3
    }

    /// Home slots per node: at a load of 6/7 an ordered probe ends within a cache line or
    /// two (it stops at the first larger check, found or not).
    static func homes(forNodes nodes: Int) -> Int { max(8, nodes + nodes / 6 + 1) }

    /// Bytes of list mask in a terminal node's record.
    static func maskBytes(listCount: Int) -> Int { listCount <= 1 ? 0 : listCount <= 8 ? 1 : 2 }

    static func align8(_ value: Int) -> Int { (value + 7) & ~7 }
}

/// The trie's hash of a name's suffix, one label at a time from the right: the hash of
/// `example.com` is the hash of `example` seeded with the hash of `com`. Fixed constants,
/// so a compiled file built by one process is read the same way by every other (Swift's
/// `Hasher` is seeded per process and cannot be used here).
enum TrieV2Hash {
    /// The seed of a top-level label (the root's hash).
    static let root: UInt64 = 0x243F_6A88_85A3_08D3

    /// The hash of `label` under a parent whose hash is `seed`.
    @inline(__always)
    static func hash(_ base: UnsafeRawPointer, _ length: Int, seed: UInt64) -> UInt64 {
        var h = seed &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(length)
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
        return h
    }

    /// The 32 bits a slot keeps of a hash (never 0, which marks an empty slot). The
    /// table is ordered by them, and they choose the home slot.
    @inline(__always)
    static func check(_ hash: UInt64) -> UInt32 { max(1, UInt32(truncatingIfNeeded: hash >> 32)) }

    /// The home slot of a check, in `0..<homes` (multiply-shift: monotone in the check,
    /// which keeps the table's order the order of the checks).
    @inline(__always)
    static func home(_ check: UInt32, homes: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(check) &* UInt64(homes)) >> 32)
    }

    /// Up to 3 label bytes and the length, as a slot holds a short label inline.
    @inline(__always)
    static func inline(_ base: UnsafeRawPointer, _ length: Int) -> UInt32 {
        var packed = UInt32(length) << 24
        for index in 0..<min(length, 3) {
            packed |= UInt32(base.load(fromByteOffset: index, as: UInt8.self)) << (8 * UInt32(index))
        }
        return packed
    }
}

/// Checking and writing the header and section table of a compiled trie image.
enum TrieV2Image {
    struct Layout {
        var listCount = 0, nodeCount = 0, nameCount = 0, homes = 0, tableSlots = 0
        var slots = 0, labels = 0, labelsLength = 0
        var listNames: [String] = []
        var inputKey: UInt64 = 0
    }

    static func validate(_ bytes: TrieBytes, verifyChecksum: Bool) throws(TrieImageError) -> Layout {
        let size = bytes.count
        guard size >= TrieV2Layout.headerSize else { throw .tooShort(size: size) }
        guard UnsafeRawBufferPointer(start: bytes.base, count: 8).elementsEqual(TrieV2Layout.magic) else {
            throw .badMagic
        }
        let version = bytes.u32(8)
        guard version == TrieV2Layout.version else { throw .unsupportedVersion(version) }
        let declared = bytes.u64(24)
        guard declared == UInt64(size) else { throw .sizeMismatch(header: declared, actual: size) }
        let sectionCount = Int(bytes.u32(12))
        guard sectionCount <= 16, TrieV2Layout.headerSize + sectionCount * TrieV2Layout.sectionEntrySize <= size else {
            throw .badSection(kind: 0, reason: "section table of \(sectionCount) entries does not fit")
        }
        var found: [TrieV2Layout.Section: (offset: Int, length: Int)] = [:]
        for index in 0..<sectionCount {
            let entry = TrieV2Layout.headerSize + index * TrieV2Layout.sectionEntrySize
            let kind = bytes.u32(entry)
            let offset = bytes.u64(entry + 8)
            let length = bytes.u64(entry + 16)
            guard offset <= UInt64(size), length <= UInt64(size) - offset else {
                throw .badSection(kind: kind, reason: "offset \(offset) + length \(length) past the end (\(size))")
            }
            if let section = TrieV2Layout.Section(rawValue: kind) { found[section] = (Int(offset), Int(length)) }
        }
        if verifyChecksum {
            let stored = bytes.u64(16)
            let computed = TrieChecksum.image(bytes.buffer)
            guard stored == computed else { throw .checksumMismatch(stored: stored, computed: computed) }
        }
        for section in TrieV2Layout.Section.allCases where found[section] == nil {
            throw .badSection(kind: section.rawValue, reason: "missing")
        }
        var layout = Layout()
        layout.nodeCount = Int(bytes.u32(40))
        layout.homes = Int(bytes.u32(44))
        layout.tableSlots = Int(bytes.u32(56))
        layout.listCount = Int(bytes.u32(48))
        layout.nameCount = Int(bytes.u32(52))
        layout.inputKey = bytes.u64(32)
        guard layout.listCount <= TrieV2Layout.maxLists else {
            throw .badCounts("\(layout.listCount) lists, at most 16")
        }
        guard layout.nodeCount < layout.tableSlots || layout.tableSlots == 0, layout.homes <= layout.tableSlots else {
            throw .badCounts("\(layout.nodeCount) nodes, \(layout.homes) home slots in \(layout.tableSlots) slots")
        }
        let slots = found[.slots]!
        let labels = found[.labels]!
        let names = found[.listNames]!
        guard slots.length == layout.tableSlots * TrieV2Layout.slotSize, labels.length <= Int(TrieV2Layout.offsetMask)
        else {
            throw .badSection(
                kind: TrieV2Layout.Section.slots.rawValue,
                reason: "\(slots.length) bytes for \(layout.tableSlots) slots")
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

/// The fast matcher (docs/decisions.md#matching): a trie over labels from the right (`com` →
/// `example` → `www`) stored as one table of 12-byte slots ordered by a hash of the suffix,
/// plus the label bytes apart (`TrieV2Layout`). A lookup walks the query's labels once, right
/// to left, on its bytes, without allocating: per label one hash and a probe that usually
/// stays in one cache line.
///
/// The label bytes are compared only where the answer depends on them: at a node where a
/// listed name ends, every label walked so far is checked at once, and a name that lists
/// nothing never leaves the slot table. A walk that followed a slot whose label differs
/// from the query's (same parent, same 32 check bits) is caught there, and nothing at or
/// below it is reported; siblings sharing check bits are marked and compared on the way.
///
/// The same bytes are built in memory or mapped from a compiled file. Every read is
/// bounds-checked against the image, so even a file changed under the mapping cannot make a
/// lookup read outside it or loop forever.
public struct TrieV2: NameMatcher {
    public let bytes: TrieBytes
    public let listCount: Int
    let nodeCount: Int
    let nameCount: Int
    /// Names of the lists, in list order (category ids for the category trie).
    let listNames: [String]
    let inputKey: UInt64
    /// `bytes.base`, kept here so a probe does not load it through the object each time.
    /// Safe to share: the bytes are immutable and live as long as `bytes`.
    nonisolated(unsafe) let base: UnsafeRawPointer
    let slots: Int
    let homes: Int
    let tableSlots: Int
    let labels: Int
    let labelsLength: Int
    let maskBytes: Int

    /// The deepest walk: a name of 253 octets has at most 127 labels.
    static let maxDepth = 128

    /// Reads and checks an image: header, version and section bounds always; the full
    /// checksum when `verifyChecksum` (docs/blocklists.md#compiled-lists: when written and
    /// when first used).
    public init(_ bytes: TrieBytes, verifyChecksum: Bool) throws(TrieImageError) {
        let layout = try TrieV2Image.validate(bytes, verifyChecksum: verifyChecksum)
        self.bytes = bytes
        base = bytes.base
        listCount = layout.listCount
        nodeCount = layout.nodeCount
        nameCount = layout.nameCount
        listNames = layout.listNames
        inputKey = layout.inputKey
        slots = layout.slots
        homes = layout.homes
        tableSlots = layout.tableSlots
        labels = layout.labels
        labelsLength = layout.labelsLength
        maskBytes = TrieV2Layout.maskBytes(listCount: layout.listCount)
    }

    public func match(_ name: DomainName, into depths: inout MatchDepths) {
        for list in 0..<listCount { depths[list] = 0 }
        guard homes > 0 else { return }
        name.bytes.withUnsafeBytes { name in
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Self.maxDepth) { path in
                walk(name, path: path.baseAddress!, into: &depths)
            }
        }
    }

    /// `path[level]` keeps what checking a walked label needs: the slot's ref (low 32 bits),
    /// the label's length (8 bits) and its start in the name (the rest).
    @inline(__always)
    private func walk(
        _ name: UnsafeRawBufferPointer, path: UnsafeMutablePointer<UInt64>, into depths: inout MatchDepths
    ) {
        guard let base = name.baseAddress, name.count < 1 << 24 else { return }
        var seed = TrieV2Hash.root
        var parent: UInt32 = 0
        var end = name.count
        var depth = 0
        var checked = 0
        while end > 0, depth < Self.maxDepth {
            var start = end
            while start > 0, base.load(fromByteOffset: start - 1, as: UInt8.self) != UInt8(ascii: ".") { start -= 1 }
            let length = end - start
            guard length > 0, length <= 255 else { return }
            let hash = TrieV2Hash.hash(base + start, length, seed: seed)
            guard let (slot, ref) = find(TrieV2Hash.check(hash), parent: parent, base + start, length) else { return }
            path[depth] = UInt64(ref) | UInt64(length) << 32 | UInt64(start) << 40
            depth += 1
            if ref & TrieV2Layout.terminalBit != 0 {
                while checked < depth {
                    let entry = path[checked]
                    let at = Int(truncatingIfNeeded: entry >> 40)
                    guard labelEquals(UInt32(truncatingIfNeeded: entry), base + at, Int((entry >> 32) & 0xFF))
                    else { return }
                    checked += 1
                }
                var mask = mask(ref)
                while mask != 0 {
                    let list = mask.trailingZeroBitCount
                    if list < listCount { depths[list] = depth }
                    mask &= mask - 1
                }
            }
            seed = hash
            parent = UInt32(slot + 1)
            end = start - 1
        }
    }

    /// The slot holding (check, parent) and its ref, or nil: an ordered probe from the
    /// home slot, stopping at the first empty slot or larger check.
    @inline(__always)
    private func find(
        _ check: UInt32, parent: UInt32, _ label: UnsafeRawPointer, _ length: Int
    ) -> (Int, UInt32)? {
        var index = TrieV2Hash.home(check, homes: homes)  // < homes <= tableSlots
        var stored = u32(slots + index * TrieV2Layout.slotSize)
        while true {
            if stored == check {
                let offset = slots + index * TrieV2Layout.slotSize
                if u32(offset + 4) == parent {
                    let ref = u32(offset + 8)
                    if ref & TrieV2Layout.ambiguousBit == 0 || labelEquals(ref, label, length) { return (index, ref) }
                }
            } else if stored &- 1 >= check {
                return nil  // empty (0) or past where the check would be
            }
            index += 1
            guard index < tableSlots else { return nil }
            stored = u32(slots + index * TrieV2Layout.slotSize)
        }
    }

    /// Whether a node's label (inline in `ref` or in its record) is these bytes.
    @inline(__always)
    private func labelEquals(_ ref: UInt32, _ label: UnsafeRawPointer, _ length: Int) -> Bool {
        if ref & TrieV2Layout.inlineBit != 0 {
            return length <= 3 && ref & 0x03FF_FFFF == TrieV2Hash.inline(label, length)
        }
        var offset = Int(ref & TrieV2Layout.offsetMask)
        if ref & TrieV2Layout.terminalBit != 0 { offset += maskBytes }
        guard offset < labelsLength, Int(base.load(fromByteOffset: labels + offset, as: UInt8.self)) == length,
            offset + 1 + length <= labelsLength
        else { return false }
        return memoryEqual(base + labels + offset + 1, label, length)
    }

    /// The list mask of a terminal node.
    @inline(__always)
    private func mask(_ ref: UInt32) -> UInt16 {
        if maskBytes == 0 || ref & TrieV2Layout.inlineBit != 0 { return 1 }
        let offset = Int(ref & TrieV2Layout.offsetMask)
        guard offset + maskBytes <= labelsLength else { return 0 }
        if maskBytes == 1 { return UInt16(base.load(fromByteOffset: labels + offset, as: UInt8.self)) }
        return UInt16(littleEndian: base.loadUnaligned(fromByteOffset: labels + offset, as: UInt16.self))
    }

    @inline(__always)
    private func u32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}
