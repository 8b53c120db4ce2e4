/// The trie's hash of a name's suffix, one label at a time from the right: the hash of
/// `example.com` is the hash of `example` seeded with the hash of `com`. Fixed constants,
/// so a compiled file built by one process is read the same way by every other (Swift's
/// `Hasher` is seeded per process and cannot be used here).
enum LabelHash {
    /// The seed of a top-level label (the root's hash).
    static let root: UInt64 = 0x243F_6A88_85A3_08D3

    /// The hash of `label` under a parent whose hash is `seed`.
    @inline(__always)
    static func hash(_ base: UnsafeRawPointer, _ length: Int, seed: UInt64) -> UInt64 {
        var h = seed &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(length)
        var offset = 0
        while offset + 8 <= length {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            h = (h ^ word) &* 0xFF51_AFD7_ED55_8CCD
            h ^= h >> 31
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < length {
            tail |= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) << shift
            shift += 8
            offset += 1
        }
        h = (h ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        h = h &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 29
        return h
    }

    /// The 32 bits a slot keeps of a hash (never 0, which marks an empty slot). The
    /// table is ordered by them, and they choose the home slot.
    @inline(__always)
    static func check(_ hash: UInt64) -> UInt32 { max(1, UInt32(truncatingIfNeeded: hash >> 32)) }

    /// The home slot of a check, in `0..<homes` (multiply-shift: monotone in the check,
    /// which keeps the table's order the order of the checks).
    @inline(__always)
    static func home(_ check: UInt32, homes: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(check) &* UInt64(homes)) >> 32)
    }

    /// Up to 3 label bytes and the length, as a slot holds a short label inline.
    @inline(__always)
    static func inline(_ base: UnsafeRawPointer, _ length: Int) -> UInt32 {
        var packed = UInt32(length) << 24
        for index in 0..<min(length, 3) {
            packed |= UInt32(base.load(fromByteOffset: index, as: UInt8.self)) << (8 * UInt32(index))
        }
        return packed
    }
}
