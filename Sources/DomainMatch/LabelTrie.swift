import CPrefetch

/// The fast matcher (docs/decisions.md#matching): a trie over labels from the right (`com` →
/// `example` → `www`) stored as one table of 12-byte slots ordered by a hash of the suffix,
/// the lists of each slot beside it and a small filter in front (`TrieLayout`). A lookup
/// walks the query's labels once, right to left, 8 bytes at a time, without allocating:
/// per label one hash and one read of the filter, which stays in the core's cache.
///
/// A name the lists do not cover is answered from the filter alone: the walk stops at the
/// first suffix the filter says is absent, and reads slots only where it says a listed
/// name may end. There, the slots of every label walked so far are read, each found by its
/// key, its check and its parent's slot, so a listed name costs one wait on memory: the
/// home slots of its labels are asked for together, and nothing else is read but the
/// byte of lists beside the last one.
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
    /// The root's hash (`TrieLayout`).
    public let seed: UInt64
    /// `bytes.base`, kept here so a probe does not load it through the object each time.
    /// Safe to share: the bytes are immutable and live as long as `bytes`.
    nonisolated(unsafe) let base: UnsafeRawPointer
    let slots: Int
    let homes: Int
    let tableSlots: Int
    /// The slot masks' offset and bytes a slot (0: one list, whose mask is implied).
    let slotMasks: Int
    let maskBytes: Int
    /// The mask table's offset and entries (0: a slot keeps its mask itself).
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
        seed = layout.seed
        slots = layout.slots
        homes = layout.homes
        tableSlots = layout.tableSlots
        slotMasks = layout.slotMasks
        maskBytes = TrieLayout.maskBytes(listCount: layout.listCount, masks: layout.maskCount)
        masks = layout.masks
        maskCount = layout.maskCount
        filter = layout.filter
        filterWords = layout.filterWords
    }

    public func match(_ name: DomainName, into depths: inout MatchDepths) {
        name.bytes.withUnsafeBytes { match(bytes: $0, labelCount: name.labelCount, into: &depths) }
    }

    public func match(bytes name: UnsafeRawBufferPointer, labelCount: Int, into depths: inout MatchDepths) {
        depths = MatchDepths()
        guard homes > 0, name.count > 0 else { return }
        if filterWords > 0 {
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Self.maxDepth) { path in
                walkFiltered(name, path: path.baseAddress!, into: &depths)
            }
        } else {
            walk(name, into: &depths)
        }
    }

    /// The walk without a filter: every label's slot read as it is hashed.
    @inline(__always)
    private func walk(_ name: UnsafeRawBufferPointer, into depths: inout MatchDepths) {
        var end = name.count
        var seed = self.seed
        var depth = 0
        var parent: UInt32 = 0
        while depth < Self.maxDepth {
            let (start, hash) = LabelHash.label(name, end: end, seed: seed)
            let length = end &- start
            guard length > 0, length <= 255,
                let slot = probe(key: LabelHash.key(hash), check: LabelHash.check(hash), parent: parent)
            else { return }
            depth &+= 1
            if u32(slots &+ slot &* TrieLayout.slotSize) & 1 != 0 { record(slot, depth: depth, into: &depths) }
            guard start > 0 else { return }
            seed = hash
            end = start &- 1
            parent = UInt32(truncatingIfNeeded: slot) &+ 1
        }
    }

    /// The walk with the filter: labels are hashed and checked against the filter only,
    /// and the slots of the labels walked so far are read only where the filter says a
    /// listed name may end. A name the lists do not cover usually reads no slot at all.
    /// `path[level]` keeps the hash of each level whose slot is not read yet (one array
    /// of 1 KiB: a larger one would cost a check of the stack per lookup).
    @inline(__always)
    private func walkFiltered(
        _ name: UnsafeRawBufferPointer, path: UnsafeMutablePointer<UInt64>, into depths: inout MatchDepths
    ) {
        var end = name.count
        var seed = self.seed
        var depth = 0
        var probed = 0
        var parent: UInt32 = 0
        while depth < Self.maxDepth {
            let (start, hash) = LabelHash.label(name, end: end, seed: seed)
            let length = end &- start
            guard length > 0, length <= 255 else { return }
            let word = u64(filter &+ TrieFilter.word(hash, words: filterWords) &* 8)
            let present = TrieFilter.present(hash)
            guard word & present == present else { return }
            path[depth] = hash
            depth &+= 1
            let terminal = TrieFilter.terminal(hash)
            if word & terminal == terminal {
                // The home slots of the levels not read yet are independent reads, and so
                // is the byte of lists beside this level's: asked for together, their
                // misses overlap.
                var ahead = probed
                var home = 0
                while ahead < depth {
                    home = LabelHash.home(LabelHash.key(path[ahead]), homes: homes)
                    pg_prefetch(base + (slots &+ home &* TrieLayout.slotSize))
                    ahead &+= 1
                }
                if maskBytes > 0 { pg_prefetch(base + (slotMasks &+ home &* maskBytes)) }
                var slot = 0
                while probed < depth {
                    let hash = path[probed]
                    guard let found = probe(key: LabelHash.key(hash), check: LabelHash.check(hash), parent: parent)
                    else { return }
                    slot = found
                    parent = UInt32(truncatingIfNeeded: found) &+ 1
                    probed &+= 1
                }
                if u32(slots &+ slot &* TrieLayout.slotSize) & 1 != 0 { record(slot, depth: depth, into: &depths) }
            }
            guard start > 0 else { return }
            seed = hash
            end = start &- 1
        }
    }

    /// The slot of the suffix whose hash has `key` and `check` and whose parent is slot
    /// `parent - 1` (0: a top-level label), or nil when the suffix is not in the trie (nor,
    /// then, anything below it). The ordered probe: keys ascend from the home slot, and
    /// nodes of one key lie side by side.
    @inline(__always)
    private func probe(key: UInt32, check: UInt32, parent: UInt32) -> Int? {
        var index = LabelHash.home(key, homes: homes)
        while index < tableSlots {
            let node = slots &+ index &* TrieLayout.slotSize
            let stored = u32(node) &>> 1
            if stored == key {
                if u32(node &+ 8) == check, u32(node &+ 4) == parent { return index }
            } else if stored &- 1 >= key &- 1 {
                return nil  // empty (0) or past the key
            }
            index &+= 1
        }
        return nil
    }

    /// At a slot where a listed name ends: records its lists at this depth.
    @inline(__always)
    private func record(_ slot: Int, depth: Int, into depths: inout MatchDepths) {
        var mask = mask(slot)
        while mask != 0 {
            let list = mask.trailingZeroBitCount
            if list < listCount { depths[list] = depth }
            mask &= mask &- 1
        }
    }

    /// The list mask of a terminal slot.
    @inline(__always)
    private func mask(_ slot: Int) -> UInt16 {
        switch maskBytes {
        case 0: return 1
        case 1:
            let byte = Int(base.load(fromByteOffset: slotMasks &+ slot, as: UInt8.self))
            guard maskCount > 0 else { return UInt16(byte) }
            guard byte < maskCount else { return 0 }
            return UInt16(littleEndian: base.loadUnaligned(fromByteOffset: masks &+ byte &* 2, as: UInt16.self))
        default:
            return UInt16(littleEndian: base.loadUnaligned(fromByteOffset: slotMasks &+ slot &* 2, as: UInt16.self))
        }
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
