import TestSupport
import Testing

@testable import DomainMatch

typealias SeededRandom = SeededGenerator

@Suite struct LabelTrieTests {
    /// Labels from a small alphabet so names share suffixes and collide often.
    static func randomName(_ random: inout SeededRandom, labels: ClosedRange<Int> = 1...5) -> DomainName {
        let alphabet = Array("abc-_0123xyz".utf8)
        let tlds = ["com", "net", "org", "co.uk", "de", "xn--p1ai"]
        var parts: [String] = []
        for _ in 0..<Int.random(in: labels, using: &random) {
            let length = [1, 2, 3, 4, 5, 8, 9, 16, 63].randomElement(using: &random)!
            parts.append(
                String(decoding: (0..<length).map { _ in alphabet.randomElement(using: &random)! }, as: UTF8.self))
        }
        parts.append(tlds.randomElement(using: &random)!)
        while parts.joined(separator: ".").utf8.count > 253 { parts.removeFirst() }
        return try! QueryName.parse(parts.joined(separator: "."))
    }

    @Test(arguments: [1, 2, 3, 4, 5])
    func agreesWithTheSimpleMatcher(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let listCount = Int.random(in: 1...16, using: &random)
        var lists: [[DomainName]] = Array(repeating: [], count: listCount)
        var all: [DomainName] = []
        for _ in 0..<3000 {
            let name = Self.randomName(&random)
            lists[Int.random(in: 0..<listCount, using: &random)].append(name)
            all.append(name)
        }
        let trie = LabelTrie(lists: lists)
        let simple = SetMatcher(lists: lists)
        #expect(trie.nodeCount > 0)
        var hits = 0
        for index in 0..<20_000 {
            let query: DomainName
            switch index % 4 {
            case 0: query = all.randomElement(using: &random)!
            case 1:
                let base = all.randomElement(using: &random)!
                query = (try? QueryName.parse("sub\(index)." + base.description)) ?? base
            case 2: query = Self.randomName(&random, labels: 0...6)
            default:
                let base = all.randomElement(using: &random)!
                query = base.labelCount > 1 ? base.suffix(labels: base.labelCount - 1) : base
            }
            let expected = simple.match(query)
            #expect(trie.match(query) == expected, "\(query)")
            if expected != MatchDepths() { hits += 1 }
        }
        #expect(hits > 5000)
    }

    @Test func mostSpecificPerListAndLabelBoundaries() throws {
        let names = { (list: [String]) in list.map { try! QueryName.parse($0) } }
        let trie = LabelTrie(lists: [
            names(["example.com", "a.b.example.com", "com.example.com"]), names(["b.example.com"]),
            names(["x.y"]),
        ])
        let depths = trie.match(try QueryName.parse("z.a.b.example.com"))
        #expect(depths[0] == 4 && depths[1] == 3 && depths[2] == 0)
        #expect(trie.match(try QueryName.parse("badexample.com")) == MatchDepths())
        #expect(trie.match(try QueryName.parse("com")) == MatchDepths())
        #expect(trie.match(try QueryName.parse("com.example.com"))[0] == 3)
        #expect(trie.nameCount == 5)
    }

    /// The image keeps hashes, not labels: none of the listed names' bytes are in it, and
    /// its size is the header, the section table, 12 bytes a slot, a byte of lists a slot
    /// (three lists), the list names, the filter and the seed, each section 64-aligned.
    @Test func theImageHoldsSlotsNotLabels() throws {
        let names = { (list: [String]) in list.map { try! QueryName.parse($0) } }
        let trie = LabelTrie(lists: [
            names(["track.alpha.com", "track.bravo.com", "track.delta.com", "x.track.foxtrot.com"]),
            names(["track.charlie.com", "track.delta.com"]), [],
        ])
        let image = withExtendedLifetime(trie) { Array(trie.bytes.buffer) }
        for label in ["track", "alpha", "bravo", "charlie", "delta", "foxtrot"] {
            #expect(image.firstRange(of: Array(label.utf8)) == nil, "\(label)")
        }
        // com, 5 second-level names, 5 `track`s and `x`: 12 nodes, 14 home slots.
        #expect(trie.nodeCount == 12 && trie.tableSlots >= 14)
        #expect(trie.maskBytes == 1)
        let align = { (value: Int) in (value + 63) & ~63 }
        let slots = align(64 + 6 * 24)
        let masks = align(slots + trie.tableSlots * 12)
        let listNames = align(masks + trie.tableSlots)
        let filter = align(listNames + "list0\nlist1\nlist2".utf8.count)
        let seed = align(filter + trie.filterWords * 8)
        #expect(image.count == seed + 8)
        #expect(trie.match(try QueryName.parse("track.alpha.com"))[0] == 3)
        #expect(trie.match(try QueryName.parse("www.track.bravo.com"))[0] == 3)
        let charlie = trie.match(try QueryName.parse("track.charlie.com"))
        #expect(charlie[0] == 0 && charlie[1] == 3)
        let delta = trie.match(try QueryName.parse("track.delta.com"))
        #expect(delta[0] == 3 && delta[1] == 3 && delta[2] == 0)
        #expect(trie.match(try QueryName.parse("track.foxtrot.com")) == MatchDepths())
        #expect(trie.match(try QueryName.parse("x.track.foxtrot.com"))[0] == 4)
        #expect(trie.match(try QueryName.parse("track.echo.com")) == MatchDepths())
    }

    /// Two builds of the same names draw two seeds: the slots differ, the answers do not.
    /// A seed given twice gives the same image twice.
    @Test func eachBuildDrawsItsOwnSeed() throws {
        let names = (0..<500).map { try! QueryName.parse("host\($0).example\($0 % 7).com") }
        // Copied while each trie is alive: its bytes go with it.
        let image = { (trie: LabelTrie) in withExtendedLifetime(trie) { Array(trie.bytes.buffer) } }
        let one = LabelTrie(lists: [names])
        let two = LabelTrie(lists: [names])
        #expect(one.seed != two.seed)
        #expect(image(one) != image(two))
        for name in names + [try QueryName.parse("www.host3.example3.com"), try QueryName.parse("host3.example4.com")] {
            #expect(one.match(name) == two.match(name), "\(name)")
        }
        let fixed = LabelTrie(lists: [names], seed: 42)
        #expect(fixed.seed == 42)
        let same = image(fixed) == image(LabelTrie(lists: [names], seed: 42))
        #expect(same)
    }

    /// Hashing every node again under a new seed (what the builder does when two nodes
    /// would share a slot's key and check) gives the image a build under that seed gives.
    @Test func reseedingGivesTheImageOfAFreshBuild() {
        let names = (0..<2_000).map { try! QueryName.parse("n\($0).zone\($0 % 13).example.org") }
        var moved = LabelTrieBuilder(listCount: 2, seed: 1)
        var fresh = LabelTrieBuilder(listCount: 2, seed: 99)
        for (index, name) in names.enumerated() {
            moved.insert(name, list: index % 2)
            fresh.insert(name, list: index % 2)
        }
        moved.reseed(99)
        let a = moved.build(listNames: ["a", "b"])
        let b = fresh.build(listNames: ["a", "b"])
        let same = Array(a.buffer) == Array(b.buffer)
        #expect(same)
    }

    /// With more than 8 lists a slot keeps its lists as one byte, an index into the table
    /// of the masks in use, not the two bytes of the mask itself.
    @Test func twelveListsKeepAOneByteMaskIndex() throws {
        var lists: [[DomainName]] = Array(repeating: [], count: 12)
        lists[0] = [try QueryName.parse("aa.example"), try QueryName.parse("bb.example")]
        lists[9] = [try QueryName.parse("bb.example"), try QueryName.parse("cc.example")]
        lists[11] = [try QueryName.parse("dd.example")]
        let trie = LabelTrie(lists: lists)
        // {0}, {0, 9}, {9} and {11}.
        #expect(trie.maskCount == 4)
        #expect(trie.maskBytes == 1)
        let bb = trie.match(try QueryName.parse("www.bb.example"))
        #expect(bb[0] == 2 && bb[9] == 2 && bb[11] == 0)
        #expect(trie.match(try QueryName.parse("cc.example"))[9] == 2)
        #expect(trie.match(try QueryName.parse("cc.example"))[0] == 0)
        #expect(trie.match(try QueryName.parse("dd.example"))[11] == 2)
        #expect(trie.match(try QueryName.parse("ee.example")) == MatchDepths())
    }

    /// More distinct masks than one byte can index: each slot keeps its two-byte mask, and
    /// the table is empty.
    @Test func manyCombinationsOfListsKeepTheirMasksWhole() throws {
        var lists: [[DomainName]] = Array(repeating: [], count: 16)
        var names: [(DomainName, UInt16)] = []
        for mask in 1...300 {
            let name = try QueryName.parse("n\(mask).example")
            names.append((name, UInt16(mask)))
            for list in 0..<16 where mask & (1 << list) != 0 { lists[list].append(name) }
        }
        let trie = LabelTrie(lists: lists)
        #expect(trie.maskCount == 0 && trie.maskBytes == 2)
        for (name, mask) in names {
            let depths = trie.match(name)
            for list in 0..<16 { #expect(depths[list] == (mask & (1 << list) != 0 ? 2 : 0)) }
        }
    }

    @Test func growsThroughManyRehashes() {
        var builder = LabelTrieBuilder(listCount: 2, expectedNames: 0)
        var names: [DomainName] = []
        for index in 0..<50_000 {
            let name = try! QueryName.parse("host\(index).zone\(index % 97).example\(index % 5).test")
            names.append(name)
            builder.insert(name, list: index % 2)
        }
        let trie = try! LabelTrie(builder.build(listNames: ["even", "odd"]), verifyChecksum: true)
        #expect(trie.nameCount == 50_000)
        #expect(trie.listNames == ["even", "odd"])
        for (index, name) in names.enumerated() {
            #expect(trie.match(name)[index % 2] == 4)
        }
    }

    @Test func wireNamesWithOddBytesDoNotMatchOrCrash() {
        let trie = LabelTrie(lists: [[try! QueryName.parse("example.com")]])
        let odd = DomainName(wireLabels: [[0x00, 0xFF, 0x2E], Array("example".utf8), Array("com".utf8)])!
        #expect(trie.match(odd)[0] == 2)
        let long = DomainName(wireLabels: Array(repeating: Array(repeating: UInt8(ascii: "a"), count: 63), count: 4))!
        #expect(trie.match(long)[0] == 0)
    }
}
