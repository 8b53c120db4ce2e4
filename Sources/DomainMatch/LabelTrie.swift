/// The fast matcher (docs/decisions.md#matching): a trie over labels from the right (`com` → `example` →
/// `www`) stored as one open-addressed table of 12-byte slots keyed by (parent, label),
/// plus a pool of label bytes. A lookup walks the query's labels once, right to left,
/// on its bytes, without allocating: one hash and one or two cache lines per label.
///
/// The same bytes are built in memory or mapped from a compiled file (`TrieLayout`).
/// Every read is bounds-checked against the image, so even a file changed under the
/// mapping cannot make a lookup read outside it or loop forever.
public struct LabelTrie: NameMatcher {
    public let bytes: TrieBytes
    public let listCount: Int
    public let nodeCount: Int
    public let nameCount: Int
    /// Names of the lists, in list order (category ids for the category trie).
    public let listNames: [String]
    public let inputKey: UInt64
    let slots: Int
    let capacity: Int
    let labels: Int
    let labelsLength: Int

    /// Reads and checks an image: header, version and section bounds always; the full
    /// checksum when `verifyChecksum` (docs/blocklists.md: when written and when first used).
    public init(_ bytes: TrieBytes, verifyChecksum: Bool) throws(TrieImageError) {
        let layout = try TrieImage.validate(bytes, verifyChecksum: verifyChecksum)
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
            var mask = bytes.u16(slots + node * TrieLayout.slotSize + 10)
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
        let (hash, packed) = LabelHash.hash(label, length, parent: parent)
        let fingerprint = LabelHash.fingerprint(hash)
        var index = LabelHash.slot(hash, capacity: capacity)
        for _ in 0..<capacity {
            let offset = slots + index * TrieLayout.slotSize
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
        return memoryEqual(bytes.base + labels + offset, label, length)
    }
}

@inline(__always)
func memoryEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
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
