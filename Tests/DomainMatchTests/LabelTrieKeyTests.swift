import Testing

@testable import DomainMatch

/// Nodes whose 31-bit keys are equal: the walk must tell them apart by parent and bytes,
/// and a key that belongs to another suffix must never report it. Real colliding names,
/// found by brute force over the hash, not a weakened hash.
@Suite struct LabelTrieKeyTests {
    static func key(_ text: String) -> UInt32 {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { buffer in
            var seed = LabelHash.root
            var end = buffer.count
            while true {
                let (start, hash) = LabelHash.label(buffer, end: end, seed: seed)
                if start == 0 { return LabelHash.key(hash) }
                seed = hash
                end = start - 1
            }
        }
    }

    /// Pairs of second-level names under `com` and `net` whose keys are equal.
    static let pairs: [(String, String)] = {
        var seen: [UInt32: String] = [:]
        var found: [(String, String)] = []
        var index = 0
        while found.count < 4, index < 2_000_000 {
            let name = "n\(index)." + (index % 2 == 0 ? "com" : "net")
            let key = key(name)
            if let other = seen[key] { found.append((other, name)) } else { seen[key] = name }
            index += 1
        }
        return found
    }()

    static func names(_ texts: [String]) -> [DomainName] { texts.map { try! QueryName.parse($0) } }

    @Test func collidingNamesAreFoundButNotEachOther() throws {
        try #require(Self.pairs.count >= 2, "the search finds colliding keys")
        for (a, b) in Self.pairs {
            #expect(Self.key(a) == Self.key(b))
            let queries = Self.names([a, b, "x.\(a)", "x.\(b)", "x.y.\(a)", "\(a).\(b)"])
            let listings: [[[DomainName]]] = [
                [Self.names([a])],  // b's key leads to a's slot: b must not match
                [Self.names([b])],
                [Self.names([a, b])],  // two slots with one key, both terminal
                [Self.names(["x.\(a)"]), Self.names([b])],  // one a parent only, one terminal
                [Self.names(["x.\(b)"]), Self.names(["y.x.\(a)"])],
            ]
            for lists in listings {
                let trie = LabelTrie(lists: lists)
                let simple = SetMatcher(lists: lists)
                for query in queries {
                    #expect(trie.match(query) == simple.match(query), "\(lists) \(query)")
                }
            }
        }
    }

    @Test func aParentSharingItsKeyWithAnotherParentLeadsToTheRightChild() throws {
        try #require(!Self.pairs.isEmpty)
        let (a, b) = Self.pairs[0]
        // The same child label under two parents with one key: each must be reached
        // through its own parent.
        let lists = [Self.names(["www.\(a)"]), Self.names(["www.\(b)", "mail.\(a)"])]
        let trie = LabelTrie(lists: lists)
        let simple = SetMatcher(lists: lists)
        for text in ["www.\(a)", "www.\(b)", "mail.\(a)", "mail.\(b)", "z.www.\(a)", "z.www.\(b)", a, b] {
            let query = try QueryName.parse(text)
            #expect(trie.match(query) == simple.match(query), "\(text)")
        }
    }
}
