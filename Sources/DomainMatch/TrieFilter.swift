/// The filter in front of a trie's slots: one 64-bit word per node chosen by the node's
/// suffix hash, two bits of it set for every node and a third for a node where a listed name
/// ends. It can say "maybe" for a suffix that is not there, never "no" for one that is.
///
/// Why: at a million names the slots are 16 MB, and every label a lookup reads from them
/// is a read from memory (about 100 ns on a small machine), while a name the lists do not
/// cover (most queries) needs none of what a slot holds. The filter, about a byte a node,
/// stays in a core's cache, so such a name is answered in a few cached reads.
public enum TrieFilter {
    /// Bits per node. At 6 the filter of a million names is under a megabyte, a core's L2
    /// here, and it still turns away most absent suffixes (TrieFilterTests holds the rates).
    /// 4 let too many through, 8 and 16 were no faster (docs/benchmarks.md).
    public static let bitsPerNode = 6

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

    /// The third bit a terminal node sets.
    @inline(__always)
    static func terminal(_ hash: UInt64) -> UInt64 { 1 &<< (hash &>> 50 & 63) }
}
