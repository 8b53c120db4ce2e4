/// Builds a `LabelTrie` from names, in memory: the nodes in arrays (insertion order) with
/// an open-addressed index over their suffix hashes, then one pass that sorts the nodes by
/// key and writes the finished image, sized for the nodes there are.
///
/// Memory stays near the finished structure (docs/benchmarks.md#targets: build peak ≤ 3×):
/// 19 bytes per node, the label bytes, an index of 4 bytes per slot, and no `String` or
/// array per name. The labels are kept to tell nodes apart exactly while building, and to
/// hash them again under another seed (`build`); the image holds none of them.
public struct LabelTrieBuilder {
    public let listCount: Int
    /// The root's hash (`TrieLayout`: the file's seed).
    public private(set) var seed: UInt64
    /// The bits of the check compared when looking for twins (two nodes with one parent,
    /// one key and one check): all of them; fewer only in tests, to meet twins.
    var checkBitsCompared: UInt32 = .max
    public var nodeCount: Int { parents.count }
    /// Distinct (name, list) pairs.
    public private(set) var nameCount = 0
    private var hashes: [UInt64] = []
    /// Parent node number (0 = a top-level label, else index + 1).
    private var parents: [UInt32] = []
    private var labelAt: [UInt32] = []
    private var lengths: [UInt8] = []
    private var masks: [UInt16] = []
    private var pool: [UInt8] = []
    /// Node numbers (index + 1, 0 = empty) by hash; a power of two long.
    private var index: [UInt32]

    /// `expectedNames` sizes the arrays (they grow when more come). `seed`: nil draws one
    /// at random, as a compiled file must (a fixed one only for tests and benchmarks that
    /// want the same image twice).
    public init(listCount: Int, expectedNames: Int = 0, seed: UInt64? = nil) {
        precondition(listCount >= 1 && listCount <= TrieLayout.maxLists, "1 to 16 lists")
        self.listCount = listCount
        self.seed = seed ?? UInt64.random(in: .min ... .max)
        let nodes = expectedNames + expectedNames / 4
        hashes.reserveCapacity(nodes)
        parents.reserveCapacity(nodes)
        labelAt.reserveCapacity(nodes)
        lengths.reserveCapacity(nodes)
        masks.reserveCapacity(nodes)
        // Reserved, not touched: untouched pages cost no resident memory, and the pool
        // never has to be copied while it grows.
        pool.reserveCapacity(expectedNames * 12)
        var size = 64
        while size * 7 < nodes * 10 { size *= 2 }
        index = [UInt32](repeating: 0, count: size)
    }

    public mutating func insert(_ name: DomainName, list: Int) {
        name.bytes.withUnsafeBytes { insert($0, list: list) }
    }

    /// Inserts a valid lowercase dotted name (as `ListItem.name` gives it).
    public mutating func insert(_ name: UnsafeRawBufferPointer, list: Int) {
        precondition(list >= 0 && list < listCount)
        guard name.count > 0 else { return }
        var seed = self.seed
        var node: UInt32 = 0
        var end = name.count
        while true {
            let (start, hash) = LabelHash.label(name, end: end, seed: seed)
            precondition(start < end, "a name without empty labels")
            node = findOrInsert(hash, name.baseAddress! + start, end - start, parent: node)
            if start == 0 { break }
            seed = hash
            end = start - 1
        }
        let bit = UInt16(1) << UInt16(list)
        let at = Int(node) - 1
        if masks[at] & bit == 0 {
            masks[at] |= bit
            nameCount += 1
        }
    }

    private mutating func findOrInsert(
        _ hash: UInt64, _ label: UnsafeRawPointer, _ length: Int, parent: UInt32
    )
        -> UInt32
    {
        precondition(length <= 255, "a label of at most 255 bytes")
        var slot = Int(truncatingIfNeeded: hash) & (index.count - 1)
        while true {
            let node = index[slot]
            if node == 0 { break }
            let at = Int(node) - 1
            if hashes[at] == hash, parents[at] == parent, Int(lengths[at]) == length,
                pool.withUnsafeBytes({ memoryEqual($0.baseAddress! + Int(labelAt[at]), label, length) })
            {
                return node
            }
            slot = (slot + 1) & (index.count - 1)
        }
        hashes.append(hash)
        parents.append(parent)
        labelAt.append(UInt32(pool.count))
        lengths.append(UInt8(length))
        masks.append(0)
        pool.append(contentsOf: UnsafeRawBufferPointer(start: label, count: length))
        let node = UInt32(parents.count)
        index[slot] = node
        if parents.count * 10 > index.count * 7 { growIndex() }
        return node
    }

    private mutating func growIndex() {
        let size = index.count * 2
        index = []
        index = [UInt32](repeating: 0, count: size)
        for at in hashes.indices {
            var slot = Int(truncatingIfNeeded: hashes[at]) & (size - 1)
            while index[slot] != 0 { slot = (slot + 1) & (size - 1) }
            index[slot] = UInt32(at + 1)
        }
    }

    /// The finished image, sized for the nodes there are. `listNames` label the lists
    /// (category ids); `inputKey` identifies the inputs for a cache; `filterBitsPerNode` 0
    /// leaves the filter out (the benchmark's measure of the walk without it). Consumes the
    /// builder.
    public mutating func build(
        listNames: [String], inputKey: UInt64 = 0, filterBitsPerNode: Int = TrieFilter.bitsPerNode
    ) -> TrieBytes {
        precondition(listNames.count == listCount)
        index = []
        let nodes = nodeCount
        // The nodes in key order. Two nodes with one parent whose keys and checks are equal
        // could not be told apart in the image (about one build in 10^8 at a million
        // names): hashed again under another seed until none are.
        var order = [UInt64](repeating: 0, count: nodes)
        while true {
            for at in 0..<nodes { order[at] = UInt64(LabelHash.key(hashes[at])) << 32 | UInt64(at) }
            order.sort()
            if !hasTwins(order) { break }
            reseed(UInt64.random(in: .min ... .max))
        }
        pool = []
        labelAt = []
        lengths = []
        let filterWords = TrieFilter.words(forNodes: nodes, bitsPerNode: filterBitsPerNode)
        var filter = [UInt64](repeating: 0, count: filterWords)
        if filterWords > 0 {
            for at in 0..<nodes {
                let hash = hashes[at]
                let bits = TrieFilter.present(hash) | (masks[at] != 0 ? TrieFilter.terminal(hash) : 0)
                filter[TrieFilter.word(hash, words: filterWords)] |= bits
            }
        }
        let homes = TrieLayout.homes(forNodes: nodes)
        // More than 8 lists: the distinct masks in a table, each slot keeping its mask's
        // index there (one byte), unless there are too many for one byte.
        var maskTable: [UInt16] = []
        var maskIndex: [UInt8] = []
        if listCount > 8 {
            var used = [Bool](repeating: false, count: 1 << 16)
            for mask in masks { used[Int(mask)] = true }
            let distinct = (1..<(1 << 16)).filter { used[$0] }
            if !distinct.isEmpty, distinct.count <= TrieLayout.maxMaskTable {
                maskTable = distinct.map { UInt16($0) }
                maskIndex = [UInt8](repeating: 0, count: 1 << 16)
                for (index, mask) in distinct.enumerated() { maskIndex[mask] = UInt8(index) }
            }
        }
        let maskBytes = TrieLayout.maskBytes(listCount: listCount, masks: maskTable.count)

        // Each node's slot: in key order, at its home or just after the one before.
        var slotOf = [UInt32](repeating: 0, count: nodes)
        var next = 0
        for key in order {
            let slot = max(LabelHash.home(UInt32(key >> 32), homes: homes), next)
            slotOf[Int(key & 0xFFFF_FFFF)] = UInt32(slot)
            next = slot + 1
        }
        order = []
        let tableSlots = max(homes, next)
        precondition(tableSlots < 1 << 31, "fewer than 2^31 slots")

        let names = Array(listNames.joined(separator: "\n").utf8)
        let tableEnd = TrieLayout.headerSize + TrieLayout.Section.allCases.count * TrieLayout.sectionEntrySize
        let slotsAt = TrieLayout.align64(tableEnd)
        let slotMasksAt = TrieLayout.align64(slotsAt + tableSlots * TrieLayout.slotSize)
        let namesAt = TrieLayout.align64(slotMasksAt + tableSlots * maskBytes)
        let filterAt = TrieLayout.align64(namesAt + names.count)
        let masksAt = TrieLayout.align64(filterAt + filterWords * 8)
        let seedAt = TrieLayout.align64(masksAt + maskTable.count * 2)
        let size = seedAt + 8
        let image = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
        image.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            image.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        }

        for at in 0..<nodes {
            let hash = hashes[at]
            let mask = masks[at]
            let slot = Int(slotOf[at])
            let parent = parents[at]
            let offset = slotsAt + slot * TrieLayout.slotSize
            put(LabelHash.key(hash) << 1 | (mask != 0 ? 1 : 0), at: offset)
            put(parent == 0 ? 0 : slotOf[Int(parent) - 1] + 1, at: offset + 4)
            put(LabelHash.check(hash), at: offset + 8)
            guard mask != 0 else { continue }
            if !maskTable.isEmpty {
                put(maskIndex[Int(mask)], at: slotMasksAt + slot)
            } else if maskBytes == 1 {
                put(UInt8(truncatingIfNeeded: mask), at: slotMasksAt + slot)
            } else if maskBytes == 2 {
                put(mask, at: slotMasksAt + slot * 2)
            }
        }
        names.withUnsafeBytes { (image + namesAt).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        for (at, word) in filter.enumerated() { put(word, at: filterAt + at * 8) }
        for (at, mask) in maskTable.enumerated() { put(mask, at: masksAt + at * 2) }
        put(seed, at: seedAt)

        TrieLayout.magic.withUnsafeBytes { image.copyMemory(from: $0.baseAddress!, byteCount: 8) }
        put(TrieLayout.version, at: 8)
        put(UInt32(TrieLayout.Section.allCases.count), at: 12)
        put(UInt64(size), at: 24)
        put(inputKey, at: 32)
        put(UInt32(nodes), at: 40)
        put(UInt32(homes), at: 44)
        put(UInt32(listCount), at: 48)
        put(UInt32(nameCount), at: 52)
        put(UInt32(tableSlots), at: 56)
        let sections: [(TrieLayout.Section, Int, Int)] = [
            (.slots, slotsAt, tableSlots * TrieLayout.slotSize), (.slotMasks, slotMasksAt, tableSlots * maskBytes),
            (.listNames, namesAt, names.count), (.filter, filterAt, filterWords * 8),
            (.masks, masksAt, maskTable.count * 2), (.seed, seedAt, 8),
        ]
        for (index, (section, offset, length)) in sections.enumerated() {
            let entry = TrieLayout.headerSize + index * TrieLayout.sectionEntrySize
            put(section.rawValue, at: entry)
            put(UInt64(offset), at: entry + 8)
            put(UInt64(length), at: entry + 16)
        }
        put(TrieChecksum.image(UnsafeRawBufferPointer(start: image, count: size)), at: 16)
        return TrieBytes(base: UnsafeRawPointer(image), count: size) { pointer, _ in
            UnsafeMutableRawPointer(mutating: pointer).deallocate()
        }
    }

    /// Whether two nodes with one parent have the same key and check (`order`: key above
    /// node number, sorted, so nodes of one key are side by side).
    private func hasTwins(_ order: [UInt64]) -> Bool {
        var first = 0
        while first < order.count {
            var end = first + 1
            while end < order.count, order[end] >> 32 == order[first] >> 32 { end += 1 }
            if end - first > 1 {
                for a in first..<(end - 1) {
                    let one = Int(order[a] & 0xFFFF_FFFF)
                    for b in (a + 1)..<end {
                        let other = Int(order[b] & 0xFFFF_FFFF)
                        let checks = LabelHash.check(hashes[one]) ^ LabelHash.check(hashes[other])
                        if parents[one] == parents[other], checks & checkBitsCompared == 0 { return true }
                    }
                }
            }
            first = end
        }
        return false
    }

    /// Every node's hash again under `seed`: a node's parent comes before it, so its
    /// parent's hash is the new one by then.
    mutating func reseed(_ seed: UInt64) {
        self.seed = seed
        pool.withUnsafeBytes { pool in
            for at in hashes.indices {
                let parent = Int(parents[at])
                let label = UnsafeRawBufferPointer(
                    start: pool.baseAddress! + Int(labelAt[at]), count: Int(lengths[at]))
                hashes[at] = LabelHash.label(label, seed: parent == 0 ? seed : hashes[parent - 1])
            }
        }
    }
}

extension LabelTrie {
    /// A trie built in memory from lists of names, e.g. the parent's lists. `seed`: nil
    /// draws one (`LabelTrieBuilder`).
    public init(
        lists: [[DomainName]], listNames: [String]? = nil, filterBitsPerNode: Int = TrieFilter.bitsPerNode,
        seed: UInt64? = nil
    ) {
        var builder = LabelTrieBuilder(
            listCount: max(1, lists.count), expectedNames: lists.reduce(0) { $0 + $1.count }, seed: seed)
        for (list, names) in lists.enumerated() {
            for name in names { builder.insert(name, list: list) }
        }
        let labels = listNames ?? (0..<max(1, lists.count)).map { "list\($0)" }
        // Cannot fail: the image was just built by this process.
        self = try! LabelTrie(
            builder.build(listNames: labels, filterBitsPerNode: filterBitsPerNode), verifyChecksum: false)
    }
}
