import Testing

@testable import DomainMatch

/// Nodes whose 31-bit keys are equal: the walk must tell them apart by parent and check,
/// and a key that belongs to another suffix must never report it. Real colliding names,
/// found by brute force over the hash under a fixed seed, not a weakened hash.
@Suite struct LabelTrieKeyTests {
    static let seed: UInt64 = 0x243F_6A88_85A3_08D3

    static func key(_ text: String) -> UInt32 {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { buffer in
            var seed = Self.seed
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
                let trie = LabelTrie(lists: lists, seed: Self.seed)
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
        let trie = LabelTrie(lists: lists, seed: Self.seed)
        let simple = SetMatcher(lists: lists)
        for text in ["www.\(a)", "www.\(b)", "mail.\(a)", "mail.\(b)", "z.www.\(a)", "z.www.\(b)", a, b] {
            let query = try QueryName.parse(text)
            #expect(trie.match(query) == simple.match(query), "\(text)")
        }
    }

    /// Pairs of names under `com` whose keys are equal: nodes with one parent.
    static let siblings: [(String, String)] = {
        var seen: [UInt32: String] = [:]
        var found: [(String, String)] = []
        var index = 0
        while found.count < 2, index < 2_000_000 {
            let name = "s\(index).com"
            let key = key(name)
            if let other = seen[key] { found.append((other, name)) } else { seen[key] = name }
            index += 1
        }
        return found
    }()

    @Test func siblingsSharingAKeyAreToldApartByTheirChecks() throws {
        try #require(!Self.siblings.isEmpty, "the search finds colliding keys")
        for (a, b) in Self.siblings {
            let lists = [Self.names([a]), Self.names(["www.\(b)"])]
            let trie = LabelTrie(lists: lists, seed: Self.seed)
            #expect(trie.seed == Self.seed)
            let simple = SetMatcher(lists: lists)
            for text in [a, b, "www.\(a)", "www.\(b)", "x.www.\(b)"] {
                let query = try QueryName.parse(text)
                #expect(trie.match(query) == simple.match(query), "\(text)")
            }
        }
    }

    /// Two nodes with one parent whose keys and checks are equal could not be told apart:
    /// the builder draws another seed. Met here by comparing checks on no bits, so that
    /// siblings with one key are twins.
    @Test func twinsMakeTheBuilderDrawAnotherSeed() throws {
        let (a, b) = try #require(Self.siblings.first)
        var builder = LabelTrieBuilder(listCount: 2, seed: Self.seed)
        builder.checkBitsCompared = 0
        builder.insert(try QueryName.parse(a), list: 0)
        builder.insert(try QueryName.parse(b), list: 1)
        let trie = try LabelTrie(builder.build(listNames: ["a", "b"]), verifyChecksum: true)
        #expect(trie.seed != Self.seed)
        #expect(Self.key(a) == Self.key(b), "twins under the first seed")
        let one = trie.match(try QueryName.parse("www.\(a)"))
        let other = trie.match(try QueryName.parse(b))
        #expect(one[0] == 2 && one[1] == 0 && other[0] == 0 && other[1] == 2)
    }
}
