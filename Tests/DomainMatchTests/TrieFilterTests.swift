import Testing

@testable import DomainMatch

/// The filter in front of the trie's slots: never a "no" for a suffix that is there, and a
/// "no" for most that are not, which is what lets a lookup of an uncovered name skip the
/// slots (counted here, not timed).
@Suite struct TrieFilterTests {
    /// The chained hash of a whole name, as the walk computes it label by label.
    static func hash(_ name: DomainName, seed: UInt64) -> UInt64 {
        name.bytes.withUnsafeBytes { bytes in
            var end = bytes.count
            var seed = seed
            while true {
                let (start, hash) = LabelHash.label(bytes, end: end, seed: seed)
                if start == 0 { return hash }
                seed = hash
                end = start - 1
            }
        }
    }

    /// What the filter of `trie` says of `name`'s node: present, and maybe a listed name.
    static func admits(_ trie: LabelTrie, _ name: DomainName) -> (present: Bool, terminal: Bool) {
        let hash = hash(name, seed: trie.seed)
        let word = trie.bytes.u64(trie.filter + TrieFilter.word(hash, words: trie.filterWords) * 8)
        let present = TrieFilter.present(hash)
        let terminal = TrieFilter.terminal(hash)
        return (word & present == present, word & terminal == terminal)
    }

    static let listed = (0..<20_000).map { try! QueryName.parse("host\($0).site\($0 % 2_000).example.com") }
    static let trie = LabelTrie(lists: [listed])

    @Test func everyNodeIsAdmittedAndEveryListedNameMayEnd() {
        let trie = Self.trie
        #expect(trie.filterWords == TrieFilter.words(forNodes: trie.nodeCount))
        #expect(trie.filterWords * 64 >= trie.nodeCount * TrieFilter.bitsPerNode)
        for name in Self.listed {
            #expect(Self.admits(trie, name) == (true, true), "\(name)")
            for labels in 1..<name.labelCount {
                #expect(Self.admits(trie, name.suffix(labels: labels)).present, "\(name.suffix(labels: labels))")
            }
        }
    }

    @Test func mostAbsentSuffixesAreTurnedAway() {
        // Siblings of listed names and names under listed ones: the suffixes a walk of an
        // uncovered name reaches, where the filter is what stops it.
        let absent = (0..<10_000).map { try! QueryName.parse("www\($0).site\($0 % 2_000).example.com") }
        let under = (0..<10_000).map { try! QueryName.parse("cdn.host\($0).site\($0 % 2_000).example.com") }
        let admitted = (absent + under).filter { Self.admits(Self.trie, $0).present }.count
        // Two bits in a word about two fifths full: about one in seven passes (2979 here).
        #expect(admitted < 20_000 / 5, "\(admitted) of 20000 absent suffixes admitted")
        #expect(admitted > 0, "a filter that admits nothing absent is suspiciously empty")
        // Present but not listed (`siteN.example.com`): two more bits are asked for, so
        // about one in six is taken for a listed name (317 here).
        let inner = (0..<2_000).map { try! QueryName.parse("site\($0).example.com") }
        let mayEnd = inner.filter { Self.admits(Self.trie, $0).terminal }.count
        #expect(mayEnd < 2_000 / 5, "\(mayEnd) of 2000 inner nodes taken for listed names")
    }

    @Test func theWalkWithTheFilterAnswersAsTheWalkWithout() throws {
        let unfiltered = LabelTrie(lists: [Self.listed], filterBitsPerNode: 0)
        #expect(unfiltered.filterWords == 0)
        var random = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let n = Int.random(in: 0..<25_000, using: &random)
            let text = [
                "host\(n).site\(n % 2_000).example.com", "x.host\(n).site\(n % 2_000).example.com",
                "site\(n % 2_500).example.com", "host\(n).site\((n + 1) % 2_000).example.com", "example.com",
                "host\(n).site\(n % 2_000).example.org",
            ].randomElement(using: &random)!
            let name = try QueryName.parse(text)
            #expect(Self.trie.match(name) == unfiltered.match(name), "\(text)")
        }
    }

    /// A damaged file read without its checksum (after the first use) may put the filter
    /// anywhere: an odd offset is read as it is, never trapped on.
    @Test func aFilterAtAnOddOffsetIsReadWithoutATrap() throws {
        var bytes = Array(Self.trie.bytes.buffer)
        let entry = 64 + 3 * 24
        #expect(bytes[entry] == 4, "the fourth section is the filter")
        let length = (0..<8).reduce(0) { $0 | Int(bytes[entry + 16 + $1]) << (8 * $1) }
        let moved = bytes.count - length - 3
        for index in 0..<8 { bytes[entry + 8 + index] = UInt8(truncatingIfNeeded: moved >> (8 * index)) }
        let damaged = try LabelTrie(TrieBytes(copying: bytes), verifyChecksum: false)
        #expect(damaged.filterWords * 8 == length)
        for name in Self.listed.prefix(2_000) { _ = damaged.match(name) }
        #expect(throws: TrieImageError.self) { try LabelTrie(TrieBytes(copying: bytes), verifyChecksum: true) }
    }
}
