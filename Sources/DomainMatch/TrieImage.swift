/// Checking and writing the header and section table of a compiled trie image.
enum TrieImage {
    struct Layout {
        var listCount = 0, nodeCount = 0, nameCount = 0, homes = 0, tableSlots = 0
        var slots = 0, slotMasks = 0, filter = 0, filterWords = 0, masks = 0, maskCount = 0
        var listNames: [String] = []
        var inputKey: UInt64 = 0
        var seed: UInt64 = 0
    }

    static func validate(_ bytes: TrieBytes, verifyChecksum: Bool) throws(TrieImageError) -> Layout {
        let size = bytes.count
        guard size >= TrieLayout.headerSize else { throw .tooShort(size: size) }
        guard UnsafeRawBufferPointer(start: bytes.base, count: 8).elementsEqual(TrieLayout.magic) else {
            throw .badMagic
        }
        let version = bytes.u32(8)
        guard version == TrieLayout.version else { throw .unsupportedVersion(version) }
        let declared = bytes.u64(24)
        guard declared == UInt64(size) else { throw .sizeMismatch(header: declared, actual: size) }
        let sectionCount = Int(bytes.u32(12))
        guard sectionCount <= 16, TrieLayout.headerSize + sectionCount * TrieLayout.sectionEntrySize <= size else {
            throw .badSection(kind: 0, reason: "section table of \(sectionCount) entries does not fit")
        }
        var found: [TrieLayout.Section: (offset: Int, length: Int)] = [:]
        for index in 0..<sectionCount {
            let entry = TrieLayout.headerSize + index * TrieLayout.sectionEntrySize
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
            let computed = TrieChecksum.image(bytes.buffer)
            guard stored == computed else { throw .checksumMismatch(stored: stored, computed: computed) }
        }
        for section in TrieLayout.Section.allCases where found[section] == nil { throw .missingSection(section) }
        var layout = Layout()
        layout.nodeCount = Int(bytes.u32(40))
        layout.homes = Int(bytes.u32(44))
        layout.tableSlots = Int(bytes.u32(56))
        layout.listCount = Int(bytes.u32(48))
        layout.nameCount = Int(bytes.u32(52))
        layout.inputKey = bytes.u64(32)
        guard layout.listCount <= TrieLayout.maxLists else { throw .badCounts("\(layout.listCount) lists, at most 16") }
        guard layout.nodeCount < layout.tableSlots || layout.tableSlots == 0, layout.homes <= layout.tableSlots,
            layout.tableSlots < 1 << 31
        else {
            throw .badCounts("\(layout.nodeCount) nodes, \(layout.homes) home slots in \(layout.tableSlots) slots")
        }
        let slots = found[.slots]!
        let names = found[.listNames]!
        guard slots.length == layout.tableSlots * TrieLayout.slotSize else {
            throw .badSection(
                kind: TrieLayout.Section.slots.rawValue, reason: "\(slots.length) bytes for \(layout.tableSlots) slots")
        }
        let filter = found[.filter]!
        guard filter.length % 8 == 0, filter.length / 8 < 1 << 32 else {
            throw .badSection(
                kind: TrieLayout.Section.filter.rawValue, reason: "\(filter.length) bytes, not whole words")
        }
        let masks = found[.masks]!
        guard masks.length % 2 == 0, masks.length <= TrieLayout.maxMaskTable * 2,
            masks.length == 0 || layout.listCount > 8
        else {
            throw .badSection(
                kind: TrieLayout.Section.masks.rawValue,
                reason: "\(masks.length) bytes of mask table for \(layout.listCount) lists")
        }
        layout.masks = masks.offset
        layout.maskCount = masks.length / 2
        let slotMasks = found[.slotMasks]!
        let maskBytes = TrieLayout.maskBytes(listCount: layout.listCount, masks: layout.maskCount)
        guard slotMasks.length == layout.tableSlots * maskBytes else {
            throw .badSection(
                kind: TrieLayout.Section.slotMasks.rawValue,
                reason: "\(slotMasks.length) bytes for \(layout.tableSlots) slots of \(maskBytes) bytes")
        }
        layout.slotMasks = slotMasks.offset
        let seed = found[.seed]!
        guard seed.length == 8 else {
            throw .badSection(kind: TrieLayout.Section.seed.rawValue, reason: "\(seed.length) bytes, not 8")
        }
        layout.seed = bytes.u64(seed.offset)
        layout.filter = filter.offset
        layout.filterWords = filter.length / 8
        layout.slots = slots.offset
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
