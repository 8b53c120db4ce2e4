import DomainMatch
import MatcherBench
import Testing

/// A compiled file of format 1 is refused by the format-2 reader, so `run` rebuilds it from
/// the text lists instead of misreading it (docs/blocklists.md#compiled-lists).
@Suite struct TrieFormatTests {
    @Test func aFormatOneImageIsRefusedNotMisread() throws {
        let names = ["example.com", "ads.tracker.net"].map { try! QueryName.parse($0) }
        let old = TrieV1(lists: [names])
        #expect(old.match(try QueryName.parse("www.example.com"))[0] == 2, "the old image is a working trie")
        let copy = TrieBytes(copying: Array(old.bytes.buffer))
        #expect(throws: TrieImageError.unsupportedVersion(1)) { try LabelTrie(copy, verifyChecksum: true) }
        #expect(throws: TrieImageError.unsupportedVersion(1)) { try LabelTrie(copy, verifyChecksum: false) }
        let new = LabelTrie(lists: [names])
        #expect(Array(new.bytes.buffer[8..<12]) == [2, 0, 0, 0])
    }
}
