import DomainMatch

/// `hashed-suffix`: the shape of AdGuard Home's and Blocky's exact-domain lookups. One
/// open-addressed hash table of the normalised names (their bytes back to back in one
/// arena); a lookup hashes the query's bytes from each label boundary to the end, longest
/// suffix first, and probes the table with them in place: no `String`, no allocation.
public struct HashedSuffixMatcher: NameMatcher {
    /// 16 bytes: the hash's high half (0 = empty), the name's offset in the arena, its
    /// length and list mask.
    struct Slot {
        var tag: UInt32 = 0
        var offset: UInt32 = 0
        var length: UInt16 = 0
        var mask: UInt16 = 0
    }

    private let slots: [Slot]
    private let arena: [UInt8]
    public let listCount: Int

    public init(lists: [[DomainName]]) {
        listCount = max(1, lists.count)
        let total = lists.reduce(0) { $0 + $1.count }
        var size = 16
        while size < total * 2 { size *= 2 }  // load ≤ 1/2: short probes, as Go's maps keep
        var slots = [Slot](repeating: Slot(), count: size)
        var arena: [UInt8] = []
        arena.reserveCapacity(lists.reduce(0) { $0 + $1.reduce(0) { $0 + $1.bytes.count } })
        for (list, names) in lists.enumerated() {
            for name in names {
                name.bytes.withUnsafeBytes { bytes in
                    let hash = ByteHash.hash(bytes.baseAddress!, bytes.count)
                    let tag = Self.tag(hash)
                    var index = Int(truncatingIfNeeded: hash) & (size - 1)
                    while slots[index].tag != 0 {
                        let slot = slots[index]
                        if slot.tag == tag, Int(slot.length) == bytes.count,
                            arena.withUnsafeBytes({
                                memoryEqual($0.baseAddress! + Int(slot.offset), bytes.baseAddress!, bytes.count)
                            })
                        {
                            slots[index].mask |= 1 << UInt16(list)
                            return
                        }
                        index = (index + 1) & (size - 1)
                    }
                    slots[index] = Slot(
                        tag: tag, offset: UInt32(arena.count), length: UInt16(bytes.count), mask: 1 << UInt16(list))
                    arena.append(contentsOf: bytes)
                }
            }
        }
        self.slots = slots
        self.arena = arena
    }

    @inline(__always)
    static func tag(_ hash: UInt64) -> UInt32 { max(1, UInt32(truncatingIfNeeded: hash >> 32)) }

    public func match(_ name: DomainName, into depths: inout MatchDepths) {
        name.bytes.withUnsafeBytes { match(bytes: $0, labelCount: name.labelCount, into: &depths) }
    }

    public func match(bytes query: UnsafeRawBufferPointer, labelCount: Int, into depths: inout MatchDepths) {
        depths = MatchDepths()
        let all: UInt16 = listCount == 16 ? 0xFFFF : (1 << UInt16(listCount)) - 1
        var found: UInt16 = 0
        slots.withUnsafeBufferPointer { slots in
            arena.withUnsafeBytes { arena in
                let base = query.baseAddress!
                let sizeMask = slots.count - 1
                var start = 0
                var labels = labelCount
                while true {
                    let length = query.count - start
                    let hash = ByteHash.hash(base + start, length)
                    let tag = Self.tag(hash)
                    var index = Int(truncatingIfNeeded: hash) & sizeMask
                    while slots[index].tag != 0 {
                        let slot = slots[index]
                        if slot.tag == tag, Int(slot.length) == length,
                            memoryEqual(arena.baseAddress! + Int(slot.offset), base + start, length)
                        {
                            var fresh = slot.mask & ~found
                            found |= slot.mask
                            while fresh != 0 {
                                depths[fresh.trailingZeroBitCount] = labels
                                fresh &= fresh - 1
                            }
                            break
                        }
                        index = (index + 1) & sizeMask
                    }
                    if found == all { return }
                    while start < query.count, base.load(fromByteOffset: start, as: UInt8.self) != UInt8(ascii: ".") {
                        start += 1
                    }
                    if start == query.count { return }
                    start += 1
                    labels -= 1
                }
            }
        }
    }
}
