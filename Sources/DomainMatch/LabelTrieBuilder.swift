/// Builds a `LabelTrie` from names, in memory: an open-addressed working table that
/// grows by rehashing in insertion order (a child's hash depends on its parent's slot,
/// so parents must move first), then one final rehash into an exactly sized image.
///
/// Memory stays near the finished structure (docs/benchmarks.md#targets: build peak ≤ 3×): the working
/// table, the label pool and a 4-byte insertion order per node, and no `String` or
/// array per name.
public struct LabelTrieBuilder {
    public let listCount: Int
    public private(set) var nodeCount = 0
    /// Distinct (name, list) pairs.
    public private(set) var nameCount = 0
    private var work: WorkTable
    private var pool: [UInt8] = []
    private var order: [UInt32] = []

    /// `expectedNames` sizes the first table (it grows when more come).
    public init(listCount: Int, expectedNames: Int = 0) {
        precondition(listCount >= 1 && listCount <= TrieLayout.maxLists, "1 to 16 lists")
        self.listCount = listCount
        work = WorkTable(capacity: TrieLayout.capacity(forNodes: max(16, expectedNames + expectedNames / 4)))
        order.reserveCapacity(expectedNames + expectedNames / 4)
        // Reserved, not touched: untouched pages cost no resident memory, and the pool
        // never has to be copied while it grows.
        pool.reserveCapacity(expectedNames * 16)
    }

    public mutating func insert(_ name: DomainName, list: Int) {
        name.bytes.withUnsafeBytes { insert($0, list: list) }
    }

    /// Inserts a valid lowercase dotted name (as `ListItem.name` gives it).
    public mutating func insert(_ name: UnsafeRawBufferPointer, list: Int) {
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
        let (hash, packed) = LabelHash.hash(label, length, parent: parent)
        let fingerprint = LabelHash.fingerprint(hash)
        let table = work.table
        var index = LabelHash.slot(hash, capacity: table.capacity)
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
        return pool.withUnsafeBytes { memoryEqual($0.baseAddress! + Int(stored), label, length) }
    }

    /// After `grow`, the parent id passed down is stale: map it through the new order.
    private var lastRemap: [UInt32] = []
    private func remappedParent(_ parent: UInt32) -> UInt32 {
        parent == 0 ? 0 : lastRemap[Int(parent) - 1] + 1
    }

    private mutating func grow() {
        let bigger = WorkTable(capacity: work.table.capacity * 3 / 2 + 16)
        lastRemap = rehash(into: bigger.table)
        work = bigger
    }

    /// Moves every node into `target` in insertion order; returns old slot → new slot.
    private mutating func rehash(into target: SlotTable) -> [UInt32] {
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
                        LabelHash.hash($0.baseAddress!, length, parent: parent).hash
                    }
                }
                return LabelHash.hash(pool.baseAddress! + Int(label), length, parent: parent).hash
            }
            let slot = target.emptySlot(from: hash)
            target.set(
                slot, parent: parent, label: label, length: length, fingerprint: LabelHash.fingerprint(hash),
                mask: source.mask(old))
            remap[old] = UInt32(slot)
            order[position] = UInt32(slot)
        }
        return remap
    }

    /// The finished image, sized for the nodes there are. `listNames` label the lists
    /// (category ids); `inputKey` identifies the inputs for a cache.
    public mutating func build(listNames: [String], inputKey: UInt64 = 0) -> TrieBytes {
        precondition(listNames.count == listCount)
        let capacity = TrieLayout.capacity(forNodes: nodeCount)
        let names = Array(listNames.joined(separator: "\n").utf8)
        let tableEnd = TrieLayout.headerSize + 3 * TrieLayout.sectionEntrySize
        let slotsAt = TrieLayout.align8(tableEnd)
        let labelsAt = TrieLayout.align8(slotsAt + capacity * TrieLayout.slotSize)
        let namesAt = TrieLayout.align8(labelsAt + pool.count)
        let size = namesAt + names.count
        let image = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        image.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        _ = rehash(into: SlotTable(base: image + slotsAt, capacity: capacity))
        pool.withUnsafeBytes { (image + labelsAt).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        names.withUnsafeBytes { (image + namesAt).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }

        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            image.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        }
        TrieLayout.magic.withUnsafeBytes { image.copyMemory(from: $0.baseAddress!, byteCount: 8) }
        put(TrieLayout.version, at: 8)
        put(UInt32(3), at: 12)
        put(UInt64(size), at: 24)
        put(inputKey, at: 32)
        put(UInt32(nodeCount), at: 40)
        put(UInt32(capacity), at: 44)
        put(UInt32(listCount), at: 48)
        put(UInt32(nameCount), at: 52)
        let sections: [(TrieLayout.Section, Int, Int)] = [
            (.slots, slotsAt, capacity * TrieLayout.slotSize),
            (.labels, labelsAt, pool.count), (.listNames, namesAt, names.count),
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

/// The builder's working slots, freed when replaced.
final class WorkTable {
    let table: SlotTable

    init(capacity: Int) {
        let base = UnsafeMutableRawPointer.allocate(byteCount: capacity * TrieLayout.slotSize, alignment: 16)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * TrieLayout.slotSize)
        table = SlotTable(base: base, capacity: capacity)
    }

    deinit { table.base.deallocate() }
}

extension LabelTrie {
    /// A trie built in memory from lists of names, e.g. the parent's lists.
    public init(lists: [[DomainName]], listNames: [String]? = nil) {
        var builder = LabelTrieBuilder(listCount: max(1, lists.count), expectedNames: lists.reduce(0) { $0 + $1.count })
        for (list, names) in lists.enumerated() {
            for name in names { builder.insert(name, list: list) }
        }
        let labels = listNames ?? (0..<max(1, lists.count)).map { "list\($0)" }
        // Cannot fail: the image was just built by this process.
        self = try! LabelTrie(builder.build(listNames: labels), verifyChecksum: false)
    }
}
