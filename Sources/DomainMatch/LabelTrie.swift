import CPrefetch

/// The fast matcher (docs/decisions.md#matching): a trie over labels from the right (`com` →
/// `example` → `www`) stored as one table of 12-byte slots ordered by a hash of the suffix,
/// plus the label bytes apart and a small filter in front (`TrieLayout`). A lookup walks
/// the query's labels once, right to left, 8 bytes at a time, without allocating: per label
/// one hash and one read of the filter, which stays in the core's cache.
///
/// A name the lists do not cover is answered from the filter alone: the walk stops at the
/// first suffix the filter says is absent, and reads slots only where it says a listed
/// name may end. There, the slots of every label walked so far are read, and only at a
/// slot that is a terminal is every label confirmed (its bytes and its parent), so a walk
/// that followed another suffix's key reports nothing at or below it. Nodes whose keys
/// are equal lie side by side and are told apart by parent and bytes.
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
    /// The mask table's offset and entries (0: a record keeps its mask itself).
    let masks: Int
    let maskCount: Int
    /// The filter's offset and length in words (0: no filter).
    let filter: Int
    public let filterWords: Int

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
        maskBytes = TrieLayout.maskBytes(listCount: layout.listCount, masks: layout.maskCount)
        masks = layout.masks
        maskCount = layout.maskCount
        filter = layout.filter
        filterWords = layout.filterWords
    }

    public func match(_ name: DomainName, into depths: inout MatchDepths) {
        depths = MatchDepths()
        guard homes > 0 else { return }
        name.bytes.withUnsafeBytes { name in
            guard name.count > 0, name.count < 1 << 23 else { return }
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Self.maxDepth) { path in
                if filterWords > 0 {
                    walkFiltered(name, path: path.baseAddress!, into: &depths)
                } else {
                    walk(name, path: path.baseAddress!, into: &depths)
                }
            }
        }
    }

    /// The walk without a filter: every label's slot read as it is hashed.
    ///
    /// `path[level]` keeps what confirming a walked label needs: its slot (low 32 bits),
    /// the label's length (8 bits) and its start in the name (the rest).
    @inline(__always)
    private func walk(
        _ name: UnsafeRawBufferPointer, path: UnsafeMutablePointer<UInt64>, into depths: inout MatchDepths
    ) {
        var end = name.count
        var seed = LabelHash.root
        var depth = 0
        var confirmed = 0
        while depth < Self.maxDepth {
            let (start, hash) = LabelHash.label(name, end: end, seed: seed)
            let length = end &- start
            guard length > 0, length <= 255 else { return }
            path[depth] = UInt64(truncatingIfNeeded: length) &<< 32 | UInt64(truncatingIfNeeded: start) &<< 40
            guard let stored = probe(depth, key: LabelHash.key(hash), name: name, path: path, confirmed: &confirmed)
            else { return }
            depth &+= 1
            if stored & 1 != 0 {
                guard terminal(depth, name: name, path: path, confirmed: &confirmed, into: &depths) else { return }
            }
            guard start > 0 else { return }
            seed = hash
            end = start &- 1
        }
    }

    /// The walk with the filter: labels are hashed and checked against the filter only,
    /// and the slots of the labels walked so far are read only where the filter says a
    /// listed name may end. A name the lists do not cover usually reads no slot at all.
    /// Until its slot is read, a level keeps its key where the slot goes in `path[level]`
    /// (one array of 1 KiB: a larger one would cost a check of the stack per lookup).
    @inline(__always)
    private func walkFiltered(
        _ name: UnsafeRawBufferPointer, path: UnsafeMutablePointer<UInt64>, into depths: inout MatchDepths
    ) {
        var end = name.count
        var seed = LabelHash.root
        var depth = 0
        var probed = 0
        var confirmed = 0
        while depth < Self.maxDepth {
            let (start, hash) = LabelHash.label(name, end: end, seed: seed)
            let length = end &- start
            guard length > 0, length <= 255 else { return }
            let word = u64(filter &+ TrieFilter.word(hash, words: filterWords) &* 8)
            let present = TrieFilter.present(hash)
            guard word & present == present else { return }
            path[depth] =
                UInt64(LabelHash.key(hash)) | UInt64(truncatingIfNeeded: length) &<< 32
                | UInt64(truncatingIfNeeded: start) &<< 40
            depth &+= 1
            let terminal = TrieFilter.terminal(hash)
            if word & terminal == terminal {
                // The home slots of the levels not read yet are independent reads: asked
                // for together, their misses overlap.
                var ahead = probed
                while ahead < depth {
                    let home = LabelHash.home(UInt32(truncatingIfNeeded: path[ahead]), homes: homes)
                    pg_prefetch(base + (slots &+ home &* TrieLayout.slotSize))
                    ahead &+= 1
                }
                var stored: UInt32 = 0
                while probed < depth {
                    guard
                        let found = probe(
                            probed, key: UInt32(truncatingIfNeeded: path[probed]), name: name, path: path,
                            confirmed: &confirmed)
                    else { return }
                    stored = found
                    probed &+= 1
                }
                if stored & 1 != 0 {
                    guard self.terminal(depth, name: name, path: path, confirmed: &confirmed, into: &depths)
                    else { return }
                }
            }
            guard start > 0 else { return }
            seed = hash
            end = start &- 1
        }
    }

    /// Reads the slot of `level` (whose length and start are in `path[level]`, the levels
    /// above already read): the ordered probe for `key`, and where other nodes share the
    /// key, the one whose parent and bytes are this suffix's. Stores the slot in
    /// `path[level]` and returns the slot's key word, or nil when the suffix is not in the
    /// trie (nor, then, anything below it).
    @inline(__always)
    private func probe(
        _ level: Int, key: UInt32, name: UnsafeRawBufferPointer, path: UnsafeMutablePointer<UInt64>,
        confirmed: inout Int
    ) -> UInt32? {
        var index = LabelHash.home(key, homes: homes)
        // The ordered probe: keys ascend from the home slot.
        var stored: UInt32 = 0
        while index < tableSlots {
            stored = u32(slots &+ index &* TrieLayout.slotSize)
            guard (stored &>> 1) &- 1 < key &- 1 else { break }  // the key, empty (0) or past it
            index &+= 1
        }
        guard index < tableSlots, stored &>> 1 == key else { return nil }
        path[level] = UInt64(truncatingIfNeeded: index) | path[level] & ~0xFFFF_FFFF
        if u32(slots &+ index &* TrieLayout.slotSize &+ 4) & TrieLayout.sharedBit != 0 {
            // Another node has this key: confirm the walk so far, then pick the one
            // whose parent and bytes are this suffix's.
            guard confirm(level, from: &confirmed, name: name, path: path),
                let slot = resolve(index, key: key, depth: level &+ 1, name: name, path: path)
            else { return nil }
            path[level] = UInt64(truncatingIfNeeded: slot) | path[level] & ~0xFFFF_FFFF
            confirmed = level &+ 1
            stored = u32(slots &+ slot &* TrieLayout.slotSize)
        }
        return stored
    }

    /// At a slot where a listed name ends (level `depth - 1`): confirms the walk and
    /// records the node's lists at this depth. False when the walk is not this suffix's.
    @inline(__always)
    private func terminal(
        _ depth: Int, name: UnsafeRawBufferPointer, path: UnsafeMutablePointer<UInt64>, confirmed: inout Int,
        into depths: inout MatchDepths
    ) -> Bool {
        // The label records to be compared lie apart from the slots and from each other:
        // asked for together, their misses overlap.
        var ahead = confirmed
        while ahead < depth {
            let slot = Int(truncatingIfNeeded: path[ahead] & 0xFFFF_FFFF)
            let ref = u32(slots &+ slot &* TrieLayout.slotSize &+ 8)
            if ref & TrieLayout.inlineBit == 0 {
                pg_prefetch(base + (labels &+ Int(truncatingIfNeeded: ref & TrieLayout.offsetMask)))
            }
            ahead &+= 1
        }
        guard confirm(depth, from: &confirmed, name: name, path: path) else { return false }
        let slot = Int(truncatingIfNeeded: path[depth &- 1] & 0xFFFF_FFFF)
        var mask = mask(u32(slots &+ slot &* TrieLayout.slotSize &+ 8))
        while mask != 0 {
            let list = mask.trailingZeroBitCount
            if list < listCount { depths[list] = depth }
            mask &= mask &- 1
        }
        return true
    }

    /// Confirms the walked levels `confirmed..<depth`: each slot's parent is the slot of
    /// the level above and its label is the query's. False when one is not: that suffix
    /// is not in the trie (its key's only slot holds another suffix), nor anything below.
    @inline(__always)
    private func confirm(
        _ depth: Int, from confirmed: inout Int, name: UnsafeRawBufferPointer, path: UnsafeMutablePointer<UInt64>
    ) -> Bool {
        while confirmed < depth {
            let entry = path[confirmed]
            let parent = confirmed == 0 ? 0 : UInt32(truncatingIfNeeded: path[confirmed - 1]) &+ 1
            let node = slots + Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) * TrieLayout.slotSize
            guard u32(node + 4) & ~TrieLayout.sharedBit == parent,
                labelEquals(
                    u32(node + 8), name.baseAddress.unsafelyUnwrapped + Int(truncatingIfNeeded: entry >> 40),
                    Int((entry >> 32) & 0xFF))
            else { return false }
            confirmed += 1
        }
        return true
    }

    /// Among the slots from `first` that hold `key`, the one whose parent is the slot of
    /// level `depth - 2` and whose label is the query's at level `depth - 1`.
    private func resolve(
        _ first: Int, key: UInt32, depth: Int, name: UnsafeRawBufferPointer, path: UnsafeMutablePointer<UInt64>
    ) -> Int? {
        let entry = path[depth - 1]
        let parent = depth < 2 ? 0 : UInt32(truncatingIfNeeded: path[depth - 2]) &+ 1
        let label = name.baseAddress.unsafelyUnwrapped + Int(truncatingIfNeeded: entry >> 40)
        let length = Int((entry >> 32) & 0xFF)
        var slot = first
        while slot < tableSlots, u32(slots + slot * TrieLayout.slotSize) >> 1 == key {
            let node = slots + slot * TrieLayout.slotSize
            if u32(node + 4) & ~TrieLayout.sharedBit == parent, labelEquals(u32(node + 8), label, length) {
                return slot
            }
            slot += 1
        }
        return nil
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
        if maskBytes == 1 {
            let byte = Int(base.load(fromByteOffset: labels + offset, as: UInt8.self))
            guard maskCount > 0 else { return UInt16(byte) }
            guard byte < maskCount else { return 0 }
            return UInt16(littleEndian: base.loadUnaligned(fromByteOffset: masks + byte * 2, as: UInt16.self))
        }
        return UInt16(littleEndian: base.loadUnaligned(fromByteOffset: labels + offset, as: UInt16.self))
    }

    @inline(__always)
    private func u32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// Unaligned: a damaged file's section table may put the filter anywhere.
    @inline(__always)
    private func u64(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
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
