/// The trie's hash of (parent node, label): fixed constants, so a compiled file built by
/// one process is read the same way by every other (Swift's `Hasher` is seeded per
/// process and cannot be used here).
enum LabelHash {
    /// Hash and packed form of one label. `packed` holds labels of up to 4 bytes inline
    /// (little-endian), which is how short labels are stored in a slot.
    @inline(__always)
    static func hash(_ base: UnsafeRawPointer, _ length: Int, parent: UInt32) -> (hash: UInt64, packed: UInt32) {
        var h = UInt64(parent) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(length)
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
        return (h, length <= 4 ? UInt32(truncatingIfNeeded: tail) : 0)
    }

    /// The slot a hash lands on, in `0..<capacity` (multiply-shift, no modulo).
    @inline(__always)
    static func slot(_ hash: UInt64, capacity: Int) -> Int {
        Int(truncatingIfNeeded: hash.multipliedFullWidth(by: UInt64(capacity)).high)
    }

    @inline(__always)
    static func fingerprint(_ hash: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: hash) }
}
