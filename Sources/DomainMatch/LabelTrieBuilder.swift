/// Builds a `LabelTrie` from names, in memory: the nodes in arrays (insertion order) with
/// an open-addressed index over their suffix hashes, then one pass that sorts the nodes by
/// key and writes the finished image, sized for the nodes there are.
///
/// Memory stays near the finished structure (docs/benchmarks.md#targets: build peak ≤ 3×):
/// 11 bytes per node, the label bytes, an index of 4 bytes per slot and the hashes (freed
/// before the image is written), and no `String` or array per name.
public struct LabelTrieBuilder {
    public let listCount: Int
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

    /// `expectedNames` sizes the arrays (they grow when more come).
    public init(listCount: Int, expectedNames: Int = 0) {
        precondition(listCount >= 1 && listCount <= TrieLayout.maxLists, "1 to 16 lists")
        self.listCount = listCount
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
        var seed = LabelHash.root
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
        // More than 8 lists: the distinct masks in a table, each record keeping its mask's
        // index there (one byte), unless there are too many for one byte.
        var maskTable: [UInt16] = []
        var maskIndex: [Int16] = []
        if listCount > 8 {
            var used = [Bool](repeating: false, count: 1 << 16)
            for mask in masks { used[Int(mask)] = true }
            let distinct = (1..<(1 << 16)).filter { used[$0] }
            if !distinct.isEmpty, distinct.count <= TrieLayout.maxMaskTable {
                maskTable = distinct.map { UInt16($0) }
                maskIndex = [Int16](repeating: -1, count: 1 << 16)
                for (index, mask) in distinct.enumerated() { maskIndex[mask] = Int16(index) }
            }
        }
        let maskBytes = TrieLayout.maskBytes(listCount: listCount, masks: maskTable.count)

        // Each node's slot: in key order, at its home or just after the one before.
        var slotOf = [UInt32](repeating: 0, count: nodes)
        var keys = [UInt32](repeating: 0, count: nodes)
        var next = 0
        do {
            var order = [UInt64](repeating: 0, count: nodes)
            for at in 0..<nodes {
                keys[at] = LabelHash.key(hashes[at])
                order[at] = UInt64(keys[at]) << 32 | UInt64(at)
            }
            hashes = []
            order.sort()
            for key in order {
                let slot = max(LabelHash.home(UInt32(key >> 32), homes: homes), next)
                slotOf[Int(key & 0xFFFF_FFFF)] = UInt32(slot)
                next = slot + 1
            }
        }
        let tableSlots = max(homes, next)
        precondition(tableSlots < 1 << 31, "fewer than 2^31 slots")
        func isInline(_ at: Int) -> Bool { lengths[at] <= 3 && (masks[at] == 0 || maskBytes == 0) }
        // Each record's offset. A record is shared by every node with the same label and,
        // for a terminal node's, the same lists (`www`, `static`, `images`, … under many
        // names; `ads`, `track`, … ending names of the same lists): a reader compares the
        // bytes at an offset and cannot tell a shared record from one of its own.
        var recordOf = [UInt32](repeating: 0, count: nodes)
        var recordBytes = 0
        do {
            var size = 1024
            while size < nodes + nodes / 4 { size *= 2 }
            var owners = [UInt32](repeating: 0, count: size)
            pool.withUnsafeBytes { pool in
                for at in 0..<nodes where !isInline(at) {
                    let length = Int(lengths[at])
                    let label = pool.baseAddress! + Int(labelAt[at])
                    // 0 for a record without a mask: only records of one kind are alike.
                    let mask = maskBytes > 0 ? UInt32(masks[at]) : 0
                    let hash = LabelHash.bytes(label, length) ^ UInt64(mask) &* LabelHash.p1
                    var slot = Int(truncatingIfNeeded: hash) & (size - 1)
                    while owners[slot] != 0 {
                        let other = Int(owners[slot]) - 1
                        if lengths[other] == lengths[at], maskBytes == 0 || masks[other] == masks[at],
                            memoryEqual(pool.baseAddress! + Int(labelAt[other]), label, length)
                        {
                            break
                        }
                        slot = (slot + 1) & (size - 1)
                    }
                    if owners[slot] != 0 {
                        recordOf[at] = recordOf[Int(owners[slot]) - 1]
                        continue
                    }
                    owners[slot] = UInt32(at + 1)
                    recordOf[at] = UInt32(recordBytes)
                    recordBytes += (mask != 0 ? maskBytes : 0) + 1 + length
                }
            }
        }
        precondition(recordBytes <= Int(TrieLayout.offsetMask), "label records past 1 GiB")

        let names = Array(listNames.joined(separator: "\n").utf8)
        let tableEnd = TrieLayout.headerSize + TrieLayout.Section.allCases.count * TrieLayout.sectionEntrySize
        let slotsAt = TrieLayout.align64(tableEnd)
        let labelsAt = TrieLayout.align64(slotsAt + tableSlots * TrieLayout.slotSize)
        let namesAt = TrieLayout.align64(labelsAt + recordBytes)
        let filterAt = TrieLayout.align64(namesAt + names.count)
        let masksAt = TrieLayout.align64(filterAt + filterWords * 8)
        let size = masksAt + maskTable.count * 2
        let image = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
        image.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            image.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        }

        // Slots and records, in node order (a name's records stay together).
        pool.withUnsafeBytes { pool in
            for at in 0..<nodes {
                let length = Int(lengths[at])
                let label = pool.baseAddress! + Int(labelAt[at])
                var ref: UInt32
                if isInline(at) {
                    ref = TrieLayout.inlineBit | LabelHash.inline(label, length)
                } else {
                    ref = recordOf[at]
                    var record = Int(ref)
                    if masks[at] != 0 {
                        if !maskTable.isEmpty {
                            put(UInt8(maskIndex[Int(masks[at])]), at: labelsAt + record)
                        } else if maskBytes == 1 {
                            put(UInt8(truncatingIfNeeded: masks[at]), at: labelsAt + record)
                        } else if maskBytes == 2 {
                            put(masks[at], at: labelsAt + record)
                        }
                        record += maskBytes
                    }
                    put(UInt8(length), at: labelsAt + record)
                    (image + labelsAt + record + 1).copyMemory(from: label, byteCount: length)
                }
                if masks[at] != 0 { ref |= TrieLayout.terminalBit }
                let slot = slotsAt + Int(slotOf[at]) * TrieLayout.slotSize
                let parent = parents[at]
                put(keys[at] << 1 | (masks[at] != 0 ? 1 : 0), at: slot)
                put(parent == 0 ? 0 : slotOf[Int(parent) - 1] + 1, at: slot + 4)
                put(ref, at: slot + 8)
            }
        }
        // Slots whose keys are equal: marked, so a lookup tells them apart by parent and bytes.
        var run = 0
        for slot in 1...max(1, tableSlots) {
            let key = { (s: Int) in
                UInt32(littleEndian: image.load(fromByteOffset: slotsAt + s * TrieLayout.slotSize, as: UInt32.self))
                    >> 1
            }
            if slot < tableSlots, key(slot) != 0, key(slot) == key(run) { continue }
            if slot - run > 1 {
                for shared in run..<slot {
                    let at = slotsAt + shared * TrieLayout.slotSize + 4
                    let parent = UInt32(littleEndian: image.load(fromByteOffset: at, as: UInt32.self))
                    put(parent | TrieLayout.sharedBit, at: at)
                }
            }
            run = slot
        }
        names.withUnsafeBytes { (image + namesAt).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        for (at, word) in filter.enumerated() { put(word, at: filterAt + at * 8) }
        for (at, mask) in maskTable.enumerated() { put(mask, at: masksAt + at * 2) }

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
            (.slots, slotsAt, tableSlots * TrieLayout.slotSize), (.labels, labelsAt, recordBytes),
            (.listNames, namesAt, names.count), (.filter, filterAt, filterWords * 8),
            (.masks, masksAt, maskTable.count * 2),
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
}

extension LabelTrie {
    /// A trie built in memory from lists of names, e.g. the parent's lists.
    public init(
        lists: [[DomainName]], listNames: [String]? = nil, filterBitsPerNode: Int = TrieFilter.bitsPerNode
    ) {
        var builder = LabelTrieBuilder(listCount: max(1, lists.count), expectedNames: lists.reduce(0) { $0 + $1.count })
        for (list, names) in lists.enumerated() {
            for name in names { builder.insert(name, list: list) }
        }
        let labels = listNames ?? (0..<max(1, lists.count)).map { "list\($0)" }
        // Cannot fail: the image was just built by this process.
        self = try! LabelTrie(
            builder.build(listNames: labels, filterBitsPerNode: filterBitsPerNode), verifyChecksum: false)
    }
}
