/// The filter in front of a trie's slots: one 64-bit word per node chosen by the node's
/// suffix hash, two bits of it set for every node and two more for a node where a listed
/// name ends. It can say "maybe" for a suffix that is not there, never "no" for one that is.
///
/// Why: at a million names the slots are 16 MB, and every label a lookup reads from them
/// is a read from memory (about 150 ns on a small machine), while a name the lists do not
/// cover (most queries) needs none of what a slot holds. The filter, a byte a node, is
/// read from the cache, so such a name is answered in a few cached reads.
public enum TrieFilter {
    /// Bits per node. At 8 the filter of a million names is 1.2 MB. With two terminal bits,
    /// 1 in 10 of the popular names the lists do not cover still reads the slots there;
    /// at 6 with one terminal bit, 2 in 5 did (TrieFilterTests holds the rates;
    /// docs/benchmarks.md has the counts).
    public static let bitsPerNode = 8

    static func words(forNodes nodes: Int, bitsPerNode: Int = bitsPerNode) -> Int {
        bitsPerNode == 0 || nodes == 0 ? 0 : max(1, (nodes * bitsPerNode + 63) / 64)
    }

    /// The word of a node, in `0..<words` (multiply-shift on the hash's low 32 bits; the
    /// key and home slot use the high ones). Words in the line of the parent's word were
    /// tried too, so that `www.example.com` costs one line after `example.com`: no faster,
    /// as a domain with many listed subdomains fills its line.
    @inline(__always)
    static func word(_ hash: UInt64, words: Int) -> Int {
        Int(truncatingIfNeeded: ((hash & 0xFFFF_FFFF) &* UInt64(truncatingIfNeeded: words)) &>> 32)
    }

    /// The two bits every node sets.
    @inline(__always)
    static func present(_ hash: UInt64) -> UInt64 {
        1 &<< (hash &>> 38 & 63) | 1 &<< (hash &>> 44 & 63)
    }

    /// The two more bits a terminal node sets. Two, not one: most names the lists do not
    /// cover pass through real inner nodes (`com`, `google.com`), which every "present"
    /// check admits, so only these bits keep such a name off the slots.
    @inline(__always)
    static func terminal(_ hash: UInt64) -> UInt64 {
        1 &<< (hash &>> 50 & 63) | 1 &<< (hash &>> 56 & 63)
    }
}
