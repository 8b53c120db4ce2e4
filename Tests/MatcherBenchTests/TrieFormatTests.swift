import DomainMatch
import Testing

/// A compiled file of an earlier format is refused by the format-8 reader, so `run` rebuilds
/// it from the text lists instead of misreading it (docs/blocklists.md#compiled-lists).
@Suite struct TrieFormatTests {
    /// The image of `trie`, copied while the trie is alive: its bytes go with it.
    static func image(_ trie: LabelTrie) -> [UInt8] { withExtendedLifetime(trie) { Array(trie.bytes.buffer) } }

    /// `value` little-endian in `width` bytes at `at`.
    static func put(_ value: UInt64, at: Int, width: Int, in bytes: inout [UInt8]) {
        for index in 0..<width { bytes[at + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
    }

    /// The header's checksum (bytes 16..<24) made right for the bytes as they now are.
    static func reseal(_ bytes: inout [UInt8]) {
        put(bytes.withUnsafeBytes { TrieChecksum.image($0) }, at: 16, width: 8, in: &bytes)
    }

    /// Every earlier format says so in its header, and that alone refuses it, checksum or
    /// not, before any section is read. Format 7 and before kept a label section where
    /// format 8 keeps the slots' lists, and the third word of their slots referred to a
    /// label where format 8's is a check. Formats 4 to 6 have format 7's sections; 3 had no
    /// filter, 1 and 2 other slots.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7] as [UInt8])
    func anEarlierImageIsRefusedNotMisread(version: UInt8) throws {
        let names = ["example.com", "ads.tracker.net"].map { try! QueryName.parse($0) }
        var bytes = Self.image(LabelTrie(lists: [names]))
        #expect(Array(bytes[8..<12]) == [8, 0, 0, 0])
        bytes[8] = version
        Self.reseal(&bytes)
        let old = TrieBytes(copying: bytes)
        let refusal = TrieImageError.unsupportedVersion(UInt32(version))
        #expect(throws: refusal) { try LabelTrie(old, verifyChecksum: true) }
        #expect(throws: refusal) { try LabelTrie(old, verifyChecksum: false) }
    }
}
