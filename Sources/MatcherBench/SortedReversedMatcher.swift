import DomainMatch
import Glibc

/// `sorted-reversed`: the compact shape many filters use. Every name is stored with its
/// labels reversed and length-prefixed (`example.com` → `3com7example`), all of them in one
/// sorted byte array with an offset per name. A name's entry is a prefix of its
/// subdomains' entries, so the names under a suffix form one contiguous run. A lookup
/// encodes the query the same way on the stack and, label by label from the right, binary
/// searches the run of the suffix so far for the next one: each step searches only within
/// the previous step's run.
public struct SortedReversedMatcher: NameMatcher {
    private let arena: [UInt8]
    /// `offsets[i]..<offsets[i + 1]` is entry i.
    private let offsets: [UInt32]
    /// List masks, one per entry; empty when there is one list (every entry is in it).
    private let masks: [UInt16]
    public let listCount: Int

    public init(lists: [[DomainName]]) {
        listCount = max(1, lists.count)
        var encoded: [(key: [UInt8], mask: UInt16)] = []
        encoded.reserveCapacity(lists.reduce(0) { $0 + $1.count })
        for (list, names) in lists.enumerated() {
            for name in names { encoded.append((Self.encode(name.bytes), 1 << UInt16(list))) }
        }
        encoded.sort { $0.key.lexicographicallyPrecedes($1.key) }
        var arena: [UInt8] = []
        var offsets: [UInt32] = [0]
        var masks: [UInt16] = []
        arena.reserveCapacity(encoded.reduce(0) { $0 + $1.key.count })
        offsets.reserveCapacity(encoded.count + 1)
        for (key, mask) in encoded {
            if let last = offsets.dropLast().last, arena[Int(last)...].elementsEqual(key) {
                masks[masks.count - 1] |= mask
                continue
            }
            arena.append(contentsOf: key)
            offsets.append(UInt32(arena.count))
            masks.append(mask)
        }
        self.arena = arena
        self.offsets = offsets
        self.masks = listCount == 1 ? [] : masks
    }

    /// `www.example.com` → `3com7example3www`.
    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 1)
        var end = bytes.count
        while end > 0 {
            var start = end
            while start > 0, bytes[start - 1] != UInt8(ascii: ".") { start -= 1 }
            out.append(UInt8(truncatingIfNeeded: end - start))
            out.append(contentsOf: bytes[start..<end])
            end = start - 1
        }
        return out
    }

    public var entryCount: Int { offsets.count - 1 }

    public func match(_ name: DomainName, into depths: inout MatchDepths) {
        name.bytes.withUnsafeBytes { match(bytes: $0, labelCount: name.labelCount, into: &depths) }
    }

    public func match(bytes: UnsafeRawBufferPointer, labelCount: Int, into depths: inout MatchDepths) {
        depths = MatchDepths()
        guard entryCount > 0 else { return }
        let count = bytes.count
        withUnsafeTemporaryAllocation(byteCount: count + 1, alignment: 8) { key in
            let key = key.baseAddress!
            arena.withUnsafeBytes { arena in
                offsets.withUnsafeBufferPointer { offsets in
                    let entries = Entries(arena: arena.baseAddress!, offsets: offsets.baseAddress!)
                    var lo = 0
                    var hi = entryCount
                    var written = 0
                    var end = count
                    var depth = 0
                    while end > 0 {
                        var start = end
                        while start > 0, bytes[start - 1] != UInt8(ascii: ".") { start -= 1 }
                        guard end - start <= 255 else { return }  // one length byte, as listed labels
                        key.storeBytes(
                            of: UInt8(truncatingIfNeeded: end - start), toByteOffset: written, as: UInt8.self)
                        (key + written + 1).copyMemory(from: bytes.baseAddress! + start, byteCount: end - start)
                        written += 1 + end - start
                        depth += 1
                        // The run of entries starting with key[0..<written].
                        lo = entries.lowerBound(lo, hi, key, written)
                        guard lo < hi, entries.hasPrefix(lo, key, written) else { return }
                        if entries.length(lo) == written {
                            var mask = masks.isEmpty ? 1 : masks[lo]
                            while mask != 0 {
                                depths[mask.trailingZeroBitCount] = depth
                                mask &= mask - 1
                            }
                        }
                        hi = entries.endOfRun(lo, hi, key, written)
                        end = start - 1
                    }
                }
            }
        }
    }

    private struct Entries {
        let arena: UnsafeRawPointer
        let offsets: UnsafePointer<UInt32>

        @inline(__always) func length(_ i: Int) -> Int { Int(offsets[i + 1] - offsets[i]) }

        /// memcmp order, a prefix before what extends it.
        @inline(__always) func compare(_ i: Int, _ key: UnsafeRawPointer, _ count: Int) -> Int32 {
            let length = length(i)
            let order = memcmp(arena + Int(offsets[i]), key, min(length, count))
            if order != 0 { return order }
            return length < count ? -1 : length > count ? 1 : 0
        }

        @inline(__always) func hasPrefix(_ i: Int, _ key: UnsafeRawPointer, _ count: Int) -> Bool {
            length(i) >= count && memcmp(arena + Int(offsets[i]), key, count) == 0
        }

        /// The first entry in `lo..<hi` not below the key.
        @inline(__always) func lowerBound(_ lo: Int, _ hi: Int, _ key: UnsafeRawPointer, _ count: Int) -> Int {
            var lo = lo
            var size = hi - lo
            while size > 0 {
                let half = size / 2
                if compare(lo + half, key, count) < 0 {
                    lo += half + 1
                    size -= half + 1
                } else {
                    size = half
                }
            }
            return lo
        }

        /// The first entry in `lo..<hi` (all at or above the key) that does not start with it.
        @inline(__always) func endOfRun(_ lo: Int, _ hi: Int, _ key: UnsafeRawPointer, _ count: Int) -> Int {
            var lo = lo
            var size = hi - lo
            while size > 0 {
                let half = size / 2
                if hasPrefix(lo + half, key, count) {
                    lo += half + 1
                    size -= half + 1
                } else {
                    size = half
                }
            }
            return lo
        }
    }
}
