import DomainMatch
import MatcherBench
import Testing

/// A compiled file of format 2 is refused by the format-3 reader, so `run` rebuilds it from
/// the text lists instead of misreading it (docs/blocklists.md#compiled-lists).
@Suite struct TrieFormatTests {
    @Test func aFormatTwoImageIsRefusedNotMisread() throws {
        let names = ["example.com", "ads.tracker.net"].map { try! QueryName.parse($0) }
        let old = TrieV2(lists: [names])
        #expect(old.match(try QueryName.parse("www.example.com"))[0] == 2, "the old image is a working trie")
        let copy = TrieBytes(copying: Array(old.bytes.buffer))
        #expect(throws: TrieImageError.unsupportedVersion(2)) { try LabelTrie(copy, verifyChecksum: true) }
        #expect(throws: TrieImageError.unsupportedVersion(2)) { try LabelTrie(copy, verifyChecksum: false) }
        let new = LabelTrie(lists: [names])
        #expect(Array(new.bytes.buffer[8..<12]) == [3, 0, 0, 0])
    }
}
