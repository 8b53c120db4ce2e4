import DomainMatch
import Testing

/// A compiled file of an earlier format is refused by the format-7 reader, so `run` rebuilds
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

    /// Format 3 is format 5 (and 6, and 7 with one list) without the filter section: the
    /// same header, the same slots and records at the same offsets, three sections, version
    /// 3. Made here from a format-7 image of one list built without its filter: what the
    /// format-3 writer wrote, but for records shared as format 6 shares them, which a reader
    /// cannot tell apart.
    static func formatThree(_ names: [DomainName]) throws -> [UInt8] {
        var bytes = image(LabelTrie(lists: [names], filterBitsPerNode: 0))
        func u64(_ at: Int) -> Int {
            Int((0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) })
        }
        // The list names are the third section; the file ended with them.
        let names = 64 + 2 * 24
        #expect(bytes[names] == 3, "the third section is the list names")
        let end = u64(names + 8) + u64(names + 16)
        bytes.removeSubrange(end...)
        put(3, at: 8, width: 4, in: &bytes)
        put(3, at: 12, width: 4, in: &bytes)
        for index in (64 + 3 * 24)..<(64 + 5 * 24) { bytes[index] = 0 }
        put(UInt64(bytes.count), at: 24, width: 8, in: &bytes)
        reseal(&bytes)
        return bytes
    }

    @Test func aFormatThreeImageIsRefusedNotMisread() throws {
        let names = ["example.com", "ads.tracker.net"].map { try! QueryName.parse($0) }
        let old = TrieBytes(copying: try Self.formatThree(names))
        #expect(throws: TrieImageError.unsupportedVersion(3)) { try LabelTrie(old, verifyChecksum: true) }
        #expect(throws: TrieImageError.unsupportedVersion(3)) { try LabelTrie(old, verifyChecksum: false) }
        let new = LabelTrie(lists: [names])
        #expect(Array(new.bytes.buffer[8..<12]) == [7, 0, 0, 0])
        #expect(new.match(try QueryName.parse("www.example.com"))[0] == 2)
    }

    /// Format 4 has the sections of format 5 and 6, but its terminal nodes set one filter
    /// bit where they ask for two: read as format 7, its filter would turn listed names
    /// away. Its header says 4, and that alone must refuse it, checksum or not. Format 5
    /// is laid out as 6 and would be read right; it is refused all the same, so that the
    /// file is rebuilt with its records shared. Format 6 kept two-byte masks with more
    /// than 8 lists and had no mask table: rebuilt so that its records shrink.
    @Test(arguments: [4, 5, 6] as [UInt8])
    func anEarlierImageWithTheSameSectionsIsRefused(version: UInt8) throws {
        let names = ["example.com", "ads.tracker.net"].map { try! QueryName.parse($0) }
        var bytes = Self.image(LabelTrie(lists: [names]))
        #expect(bytes[8] == 7)
        bytes[8] = version
        Self.reseal(&bytes)
        let old = TrieBytes(copying: bytes)
        let refusal = TrieImageError.unsupportedVersion(UInt32(version))
        #expect(throws: refusal) { try LabelTrie(old, verifyChecksum: true) }
        #expect(throws: refusal) { try LabelTrie(old, verifyChecksum: false) }
    }
}
