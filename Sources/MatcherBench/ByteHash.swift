/// A fast hash of a byte range for the reference strategies' tables: 8 bytes a step, one
/// multiply each, and a final mix (the shape of the wyhash/FxHash family Go and Rust
/// filters use).
enum ByteHash {
    @inline(__always)
    static func hash(_ base: UnsafeRawPointer, _ count: Int) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(count)
        var offset = 0
        while offset + 8 <= count {
            h =
                (h ^ UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                &* 0xFF51_AFD7_ED55_8CCD
            h = (h << 23) | (h >> 41)
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < count {
            tail |= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) << shift
            shift += 8
            offset += 1
        }
        h = (h ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 32
        return h
    }
}
