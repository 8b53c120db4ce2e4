/// The fast matcher (docs/decisions.md#matching): a trie over labels from the right (`com` →
/// `example` → `www`) stored as one table of 12-byte slots ordered by a hash of the suffix,
/// plus the label bytes apart (`TrieLayout`). A lookup walks the query's labels once, right
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
public struct LabelTrie: NameMatcher {
    public let bytes: TrieBytes
    public let listCount: Int
    public let nodeCount: Int
    public let nameCount: Int
    /// Names of the lists, in list order (category ids for the category trie).
    public let listNames: [String]
    public let inputKey: UInt64
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
        let layout = try TrieImage.validate(bytes, verifyChecksum: verifyChecksum)
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
        maskBytes = TrieLayout.maskBytes(listCount: layout.listCount)
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
        var seed = LabelHash.root
        var parent: UInt32 = 0
        var end = name.count
        var depth = 0
        var checked = 0
        while end > 0, depth < Self.maxDepth {
            var start = end
            while start > 0, base.load(fromByteOffset: start - 1, as: UInt8.self) != UInt8(ascii: ".") { start -= 1 }
            let length = end - start
            guard length > 0, length <= 255 else { return }
            let hash = LabelHash.hash(base + start, length, seed: seed)
            guard let (slot, ref) = find(LabelHash.check(hash), parent: parent, base + start, length) else { return }
            path[depth] = UInt64(ref) | UInt64(length) << 32 | UInt64(start) << 40
            depth += 1
            if ref & TrieLayout.terminalBit != 0 {
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
        var index = LabelHash.home(check, homes: homes)  // < homes <= tableSlots
        var stored = u32(slots + index * TrieLayout.slotSize)
        while true {
            if stored == check {
                let offset = slots + index * TrieLayout.slotSize
                if u32(offset + 4) == parent {
                    let ref = u32(offset + 8)
                    if ref & TrieLayout.ambiguousBit == 0 || labelEquals(ref, label, length) { return (index, ref) }
                }
            } else if stored &- 1 >= check {
                return nil  // empty (0) or past where the check would be
            }
            index += 1
            guard index < tableSlots else { return nil }
            stored = u32(slots + index * TrieLayout.slotSize)
        }
    }

    /// Whether a node's label (inline in `ref` or in its record) is these bytes.
    @inline(__always)
    private func labelEquals(_ ref: UInt32, _ label: UnsafeRawPointer, _ length: Int) -> Bool {
        if ref & TrieLayout.inlineBit != 0 {
            return length <= 3 && ref & 0x03FF_FFFF == LabelHash.inline(label, length)
        }
        var offset = Int(ref & TrieLayout.offsetMask)
        if ref & TrieLayout.terminalBit != 0 { offset += maskBytes }
        guard offset < labelsLength, Int(base.load(fromByteOffset: labels + offset, as: UInt8.self)) == length,
            offset + 1 + length <= labelsLength
        else { return false }
        return memoryEqual(base + labels + offset + 1, label, length)
    }

    /// The list mask of a terminal node.
    @inline(__always)
    private func mask(_ ref: UInt32) -> UInt16 {
        if maskBytes == 0 || ref & TrieLayout.inlineBit != 0 { return 1 }
        let offset = Int(ref & TrieLayout.offsetMask)
        guard offset + maskBytes <= labelsLength else { return 0 }
        if maskBytes == 1 { return UInt16(base.load(fromByteOffset: labels + offset, as: UInt8.self)) }
        return UInt16(littleEndian: base.loadUnaligned(fromByteOffset: labels + offset, as: UInt16.self))
    }

    @inline(__always)
    private func u32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}

/// Whether `count` bytes at `a` and `b` are the same: 8 bytes a step, then the tail.
@inline(__always)
public func memoryEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
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
