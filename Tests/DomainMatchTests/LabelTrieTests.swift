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

    /// A label record is shared by the nodes whose records are the same bytes: the same
    /// label and, where an entry ends, the same lists. Three lists: a one-byte mask.
    @Test func terminalNodesWithTheSameLabelAndListsShareOneRecord() throws {
        let names = { (list: [String]) in list.map { try! QueryName.parse($0) } }
        let trie = LabelTrie(lists: [
            names(["track.alpha.com", "track.bravo.com", "track.delta.com", "x.track.foxtrot.com"]),
            names(["track.charlie.com", "track.delta.com"]), [],
        ])
        // alpha, bravo, charlie, delta and foxtrot: a record each (1 + 5 or 1 + 7 bytes).
        // `track` ending list 0's entries (alpha, bravo): one record of mask, length and
        // bytes (7), and one each for list 1 (charlie) and both lists (delta). `track`
        // under foxtrot ends no entry: a record without a mask (6). `x`: mask, length,
        // byte (3). `com` is inline. Without sharing, alpha's and bravo's would be two.
        #expect(trie.labelsLength == 6 + 6 + 8 + 6 + 8 + 3 * 7 + 6 + 3)
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

    /// With more than 8 lists a terminal record keeps its mask as one byte, an index into
    /// the table of the masks in use, not the two bytes of the mask itself.
    @Test func twelveListsKeepAOneByteMaskIndex() throws {
        var lists: [[DomainName]] = Array(repeating: [], count: 12)
        lists[0] = [try QueryName.parse("aa.example"), try QueryName.parse("bb.example")]
        lists[9] = [try QueryName.parse("bb.example"), try QueryName.parse("cc.example")]
        lists[11] = [try QueryName.parse("dd.example")]
        let trie = LabelTrie(lists: lists)
        // {0}, {0, 9}, {9} and {11}.
        #expect(trie.maskCount == 4)
        // `example`: length and bytes (8); aa, bb, cc, dd: index, length, bytes (4 each).
        // Two-byte masks would make them 5 each.
        #expect(trie.labelsLength == 8 + 4 * 4)
        let bb = trie.match(try QueryName.parse("www.bb.example"))
        #expect(bb[0] == 2 && bb[9] == 2 && bb[11] == 0)
        #expect(trie.match(try QueryName.parse("cc.example"))[9] == 2)
        #expect(trie.match(try QueryName.parse("cc.example"))[0] == 0)
        #expect(trie.match(try QueryName.parse("dd.example"))[11] == 2)
        #expect(trie.match(try QueryName.parse("ee.example")) == MatchDepths())
    }

    /// More distinct masks than one byte can index: each record keeps its two-byte mask,
    /// and the table is empty.
    @Test func manyCombinationsOfListsKeepTheirMasksWhole() throws {
        var lists: [[DomainName]] = Array(repeating: [], count: 16)
        var names: [(DomainName, UInt16)] = []
        for mask in 1...300 {
            let name = try QueryName.parse("n\(mask).example")
            names.append((name, UInt16(mask)))
            for list in 0..<16 where mask & (1 << list) != 0 { lists[list].append(name) }
        }
        let trie = LabelTrie(lists: lists)
        #expect(trie.maskCount == 0)
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
