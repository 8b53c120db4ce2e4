/// The trie's hash of a name's suffix, one label at a time from the right: the hash of
/// `example.com` is the hash of `example` seeded with the hash of `com`, and the hash of
/// `com` is seeded with the trie's own seed (`TrieLayout`: drawn when the trie is built and
/// kept in its file, so every process reads a compiled file the same way; Swift's `Hasher`
/// is seeded per process and cannot be used here).
///
/// A label is read 8 bytes at a time from its end, as if the name had dots in front of it,
/// so finding the label's start and hashing it take one load and one multiply for a label
/// of up to 7 bytes, with no loop over its bytes.
enum LabelHash {
    static let p1: UInt64 = 0xA076_1D64_78BD_642F
    static let p2: UInt64 = 0xE703_7ED1_A0B4_28DB
    static let p3: UInt64 = 0x8EBC_6AF0_9C88_C6E3

    /// The label of `name` that ends at `end` (just before a dot or the end of the name):
    /// where it starts and its hash under `seed`. `end` is in `1...name.count`.
    @inline(__always)
    static func label(_ name: UnsafeRawBufferPointer, end: Int, seed: UInt64) -> (start: Int, hash: UInt64) {
        let last = word(name, end)
        let dots = dotBytes(last)
        if dots != 0 {
            // The common case: the label and the dot before it in one word.
            let length = dots.leadingZeroBitCount &>> 3
            guard length > 0 else { return (end, 0) }
            return (end &- length, mix(seed, last &>> UInt64(64 &- 8 &* length), length))
        }
        var start = end &- 8
        while true {
            let before = dotBytes(word(name, start))
            if before != 0 {
                start &-= before.leadingZeroBitCount &>> 3
                break
            }
            start &-= 8
        }
        var h = seed
        var at = end
        while at &- start > 8 {
            h = multiplyFold(h ^ word(name, at) ^ p1, p3)
            at &-= 8
        }
        let rest = at &- start
        return (start, mix(h, word(name, at) &>> UInt64(64 &- 8 &* rest), end &- start))
    }

    /// The last step for every label: its leftmost (up to 8) bytes and its length.
    @inline(__always)
    private static func mix(_ h: UInt64, _ bytes: UInt64, _ length: Int) -> UInt64 {
        multiplyFold(h ^ bytes ^ p1, p2 ^ UInt64(truncatingIfNeeded: length))
    }

    /// The high and low halves of the 128-bit product, folded.
    @inline(__always)
    static func multiplyFold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    /// The 8 bytes before `end`, little-endian (the byte at `end - 1` the highest), with
    /// dots for the bytes before the name.
    @inline(__always)
    private static func word(_ name: UnsafeRawBufferPointer, _ end: Int) -> UInt64 {
        let base = name.baseAddress.unsafelyUnwrapped
        if end >= 8 { return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: end &- 8, as: UInt64.self)) }
        return head(name, end)
    }

    /// `word` near the start of the name: its first `end` bytes (0 to 7) above dots.
    @inline(__always)
    private static func head(_ name: UnsafeRawBufferPointer, _ end: Int) -> UInt64 {
        guard end > 0 else { return 0x2E2E_2E2E_2E2E_2E2E }
        var bytes: UInt64 = 0
        if name.count >= 8 {
            let first = UInt64(littleEndian: name.baseAddress.unsafelyUnwrapped.loadUnaligned(as: UInt64.self))
            bytes = first & (UInt64.max &>> UInt64(64 &- 8 &* end))
        } else {
            for offset in 0..<end { bytes |= UInt64(name[offset]) &<< UInt64(8 &* offset) }
        }
        let shift = UInt64(8 &* (8 &- end))
        return bytes &<< shift | 0x2E2E_2E2E_2E2E_2E2E &>> UInt64(8 &* end)
    }

    /// The top bit of each byte of `word` that is a dot, and no other bit.
    @inline(__always)
    private static func dotBytes(_ word: UInt64) -> UInt64 {
        let low: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let x = word ^ 0x2E2E_2E2E_2E2E_2E2E
        return ~(((x & low) &+ low) | x | low)
    }

    /// The 31 bits a slot keeps of a hash (never 0, which marks an empty slot). The
    /// table is ordered by them, and they choose the home slot.
    @inline(__always)
    static func key(_ hash: UInt64) -> UInt32 { max(1, UInt32(truncatingIfNeeded: hash >> 33)) }

    /// The home slot of a key, in `0..<homes` (multiply-shift: monotone in the key, which
    /// keeps the table's order the order of the keys).
    @inline(__always)
    static func home(_ key: UInt32, homes: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(key) &* UInt64(homes)) >> 31)
    }

    /// The 32 bits a slot keeps of a hash besides its key, read to confirm that the slot is
    /// this suffix's: the low half, which the key does not hold.
    @inline(__always)
    static func check(_ hash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: hash) }

    /// The hash of one label on its own (its bytes, without dots) under `seed`: what
    /// `label` gives for it inside a name.
    static func label(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        label(bytes, end: bytes.count, seed: seed).hash
    }
}
