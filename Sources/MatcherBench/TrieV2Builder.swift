import DomainMatch

// The builder of `trie-v2` (see TrieV2.swift).

/// Builds a `TrieV2` from names, in memory: the nodes in arrays (insertion order) with
/// an open-addressed index over their suffix hashes, then one pass that sorts the nodes by
/// check and writes the finished image, sized for the nodes there are.
///
/// Memory stays near the finished structure (docs/benchmarks.md#targets: build peak ≤ 3×):
/// 11 bytes per node, the label bytes, an index of 4 bytes per slot and the hashes (freed
/// before the image is written), and no `String` or array per name.
struct TrieV2Builder {
    let listCount: Int
    var nodeCount: Int { parents.count }
    /// Distinct (name, list) pairs.
    private(set) var nameCount = 0
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
    init(listCount: Int, expectedNames: Int = 0) {
        precondition(listCount >= 1 && listCount <= TrieV2Layout.maxLists, "1 to 16 lists")
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

    mutating func insert(_ name: DomainName, list: Int) {
        name.bytes.withUnsafeBytes { insert($0, list: list) }
    }

    /// Inserts a valid lowercase dotted name (as `ListItem.name` gives it).
    mutating func insert(_ name: UnsafeRawBufferPointer, list: Int) {
        precondition(list >= 0 && list < listCount)
        guard let base = name.baseAddress, name.count > 0 else { return }
        var seed = TrieV2Hash.root
        var node: UInt32 = 0
        var end = name.count
        while end > 0 {
            var start = end
            while start > 0, base.load(fromByteOffset: start - 1, as: UInt8.self) != UInt8(ascii: ".") { start -= 1 }
            let hash = TrieV2Hash.hash(base + start, end - start, seed: seed)
            node = findOrInsert(hash, base + start, end - start, parent: node)
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
    /// (category ids); `inputKey` identifies the inputs for a cache. Consumes the builder.
    mutating func build(listNames: [String], inputKey: UInt64 = 0) -> TrieBytes {
        precondition(listNames.count == listCount)
        index = []
        let nodes = nodeCount
        let homes = TrieV2Layout.homes(forNodes: nodes)
        let maskBytes = TrieV2Layout.maskBytes(listCount: listCount)

        // Each node's slot: in check order, at its home or just after the one before.
        var slotOf = [UInt32](repeating: 0, count: nodes)
        var checks = [UInt32](repeating: 0, count: nodes)
        var next = 0
        do {
            var order = [UInt64](repeating: 0, count: nodes)
            for at in 0..<nodes {
                checks[at] = TrieV2Hash.check(hashes[at])
                order[at] = UInt64(checks[at]) << 32 | UInt64(at)
            }
            hashes = []
            order.sort()
            for key in order {
                let slot = max(TrieV2Hash.home(UInt32(key >> 32), homes: homes), next)
                slotOf[Int(key & 0xFFFF_FFFF)] = UInt32(slot)
                next = slot + 1
            }
        }
        let tableSlots = max(homes, next)
        func isInline(_ at: Int) -> Bool { lengths[at] <= 3 && (masks[at] == 0 || maskBytes == 0) }
        // Each record's offset. Records without a mask are shared by every node with the
        // same label (`www`, `static`, `images`, … under many names).
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
                    if masks[at] != 0, maskBytes > 0 {
                        recordOf[at] = UInt32(recordBytes)
                        recordBytes += maskBytes + 1 + length
                        continue
                    }
                    var slot = Int(truncatingIfNeeded: TrieV2Hash.hash(label, length, seed: 0)) & (size - 1)
                    while owners[slot] != 0 {
                        let other = Int(owners[slot]) - 1
                        if lengths[other] == lengths[at],
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
                    recordBytes += 1 + length
                }
            }
        }
        precondition(recordBytes <= Int(TrieV2Layout.offsetMask), "label records past 512 MiB")

        let names = Array(listNames.joined(separator: "\n").utf8)
        let tableEnd = TrieV2Layout.headerSize + 3 * TrieV2Layout.sectionEntrySize
        let slotsAt = TrieV2Layout.align8(tableEnd)
        let labelsAt = TrieV2Layout.align8(slotsAt + tableSlots * TrieV2Layout.slotSize)
        let namesAt = TrieV2Layout.align8(labelsAt + recordBytes)
        let size = namesAt + names.count
        let image = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
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
                    ref = TrieV2Layout.inlineBit | TrieV2Hash.inline(label, length)
                } else {
                    ref = recordOf[at]
                    var record = Int(ref)
                    if masks[at] != 0 {
                        if maskBytes == 1 { put(UInt8(truncatingIfNeeded: masks[at]), at: labelsAt + record) }
                        if maskBytes == 2 { put(masks[at], at: labelsAt + record) }
                        record += maskBytes
                    }
                    put(UInt8(length), at: labelsAt + record)
                    (image + labelsAt + record + 1).copyMemory(from: label, byteCount: length)
                    record += 1 + length
                }
                if masks[at] != 0 { ref |= TrieV2Layout.terminalBit }
                let slot = slotsAt + Int(slotOf[at]) * TrieV2Layout.slotSize
                let parent = parents[at]
                put(checks[at], at: slot)
                put(parent == 0 ? 0 : slotOf[Int(parent) - 1] + 1, at: slot + 4)
                put(ref, at: slot + 8)
            }
        }
        // Siblings with the same check: marked, so a lookup compares their bytes.
        var run = 0
        for slot in 1...max(1, tableSlots) {
            let check = { (s: Int) in
                UInt32(littleEndian: image.load(fromByteOffset: slotsAt + s * 12, as: UInt32.self))
            }
            if slot < tableSlots, check(slot) != 0, check(slot) == check(run) { continue }
            if slot - run > 1 {
                for a in run..<slot {
                    for b in run..<slot where a != b {
                        let pa = image.load(fromByteOffset: slotsAt + a * 12 + 4, as: UInt32.self)
                        let pb = image.load(fromByteOffset: slotsAt + b * 12 + 4, as: UInt32.self)
                        if pa == pb {
                            let ref = UInt32(
                                littleEndian: image.load(fromByteOffset: slotsAt + a * 12 + 8, as: UInt32.self))
                            put(ref | TrieV2Layout.ambiguousBit, at: slotsAt + a * 12 + 8)
                        }
                    }
                }
            }
            run = slot
        }
        names.withUnsafeBytes { (image + namesAt).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }

        TrieV2Layout.magic.withUnsafeBytes { image.copyMemory(from: $0.baseAddress!, byteCount: 8) }
        put(TrieV2Layout.version, at: 8)
        put(UInt32(3), at: 12)
        put(UInt64(size), at: 24)
        put(inputKey, at: 32)
        put(UInt32(nodes), at: 40)
        put(UInt32(homes), at: 44)
        put(UInt32(listCount), at: 48)
        put(UInt32(nameCount), at: 52)
        put(UInt32(tableSlots), at: 56)
        let sections: [(TrieV2Layout.Section, Int, Int)] = [
            (.slots, slotsAt, tableSlots * TrieV2Layout.slotSize),
            (.labels, labelsAt, recordBytes), (.listNames, namesAt, names.count),
        ]
        for (index, (section, offset, length)) in sections.enumerated() {
            let entry = TrieV2Layout.headerSize + index * TrieV2Layout.sectionEntrySize
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

extension TrieV2 {
    /// A trie built in memory from lists of names, e.g. the parent's lists.
    public init(lists: [[DomainName]], listNames: [String]? = nil) {
        var builder = TrieV2Builder(listCount: max(1, lists.count), expectedNames: lists.reduce(0) { $0 + $1.count })
        for (list, names) in lists.enumerated() {
            for name in names { builder.insert(name, list: list) }
        }
        let labels = listNames ?? (0..<max(1, lists.count)).map { "list\($0)" }
        // Cannot fail: the image was just built by this process.
        self = try! TrieV2(builder.build(listNames: labels), verifyChecksum: false)
    }
}
