import DomainMatch
import MatcherBench
import TestSupport
import Testing

/// Every strategy of `bench matcher` answers exactly as the trie does: the same table of
/// names, subdomains, IDN, trailing dots and case, random lists of up to 16 lists, and the
/// same `hits` on every query mix (docs/benchmarks.md#strategies).
@Suite struct StrategyAgreementTests {
    static func names(_ texts: [String]) -> [DomainName] { texts.map { try! QueryName.parse($0) } }

    static let lists = [
        names([
            "example.com", "a.b.example.com", "com.example.com", "xn--bcher-kva.de", "ads.tracker.net",
            "x.y", "t.co", "very-long-label-of-the-list-that-goes-on-for-quite-a-while.org",
        ]),
        names(["b.example.com", "tracker.net", "co.uk", "xn--bcher-kva.de"]),
    ]

    /// Query text → the trie's answer per list, written out by hand.
    static let table: [(String, [Int])] = [
        ("example.com", [2, 0]), ("EXAMPLE.COM.", [2, 0]), ("www.Example.Com", [2, 0]),
        ("z.a.b.example.com", [4, 3]), ("b.example.com", [2, 3]), ("badexample.com", [0, 0]),
        ("com", [0, 0]), ("com.example.com", [3, 0]), ("Bücher.de", [2, 2]), ("www.bücher.de.", [2, 2]),
        ("xn--bcher-kva.de", [2, 2]), ("bucher.de", [0, 0]), ("tracker.net", [0, 2]),
        ("ads.tracker.net", [3, 2]), ("x.ads.tracker.net", [3, 2]), ("y", [0, 0]), ("q.x.y", [2, 0]),
        ("t.co", [2, 0]), ("co", [0, 0]), ("a.t.co", [2, 0]), ("bbc.co.uk", [0, 2]), ("uk", [0, 0]),
        ("a.very-long-label-of-the-list-that-goes-on-for-quite-a-while.org", [2, 0]),
        ("very-long-label-of-the-list-that-goes-on-for-quite-a-while.orgx", [0, 0]),
        (String(repeating: "a.", count: 125) + "x.y", [2, 0]),
        (String(repeating: "a.", count: 121) + "example.com", [2, 0]),
        ([String](repeating: String(repeating: "z", count: 63), count: 3).joined(separator: ".") + ".x.y", [2, 0]),
    ]

    static func strategies(_ lists: [[DomainName]], scratch: ScratchDirectory) throws -> [(String, any NameMatcher)] {
        var out: [(String, any NameMatcher)] = []
        for strategy in Strategy.allCases {
            if let matcher = strategy.buildInMemory(lists) {
                out.append((strategy.rawValue, matcher))
            } else {
                let path = scratch.path("\(out.count).sqlite")
                try SQLiteMatcher.create(path: path, lists: lists)
                out.append((strategy.rawValue, try SQLiteMatcher(path: path, listCount: lists.count)))
            }
        }
        #expect(out.map(\.0) == Strategy.allCases.map(\.rawValue))
        return out
    }

    /// The lookup of a name given as bytes in place (`match(bytes:labelCount:into:)`, what
    /// `Measure` calls).
    static func inPlace(_ matcher: any NameMatcher, _ name: DomainName) -> MatchDepths {
        var depths = MatchDepths()
        name.bytes.withUnsafeBytes { matcher.match(bytes: $0, labelCount: name.labelCount, into: &depths) }
        return depths
    }

    @Test func theTableAgreesEverywhere() throws {
        let scratch = try ScratchDirectory()
        let all = try Self.strategies(Self.lists, scratch: scratch)
        for (text, expected) in Self.table {
            let query = try QueryName.parse(text)
            for (name, matcher) in all {
                let depths = matcher.match(query)
                #expect([depths[0], depths[1]] == expected, "\(name): \(text)")
                #expect(Self.inPlace(matcher, query) == depths, "\(name), in place: \(text)")
            }
        }
        let odd = DomainName(wireLabels: [[0x00, 0xFF, 0x2E], Array("example".utf8), Array("com".utf8)])!
        let long = DomainName(wireLabels: [Array(repeating: UInt8(ascii: "a"), count: 300), Array("x.y".utf8)])!
        for (name, matcher) in all {
            #expect(matcher.match(odd)[0] == 2, "\(name)")
            #expect(matcher.match(long)[0] == 2, "\(name)")
        }
    }

    @Test(arguments: [1, 2, 3])
    func randomListsAgree(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let listCount = [1, 3, 16][Int(seed - 1)]
        let alphabet = Array("abc-_01xyz".utf8)
        func name(_ labels: ClosedRange<Int>) -> DomainName {
            var parts: [String] = []
            for _ in 0..<Int.random(in: labels, using: &random) {
                let length = [1, 2, 3, 4, 5, 9, 16, 63].randomElement(using: &random)!
                parts.append(
                    String(decoding: (0..<length).map { _ in alphabet.randomElement(using: &random)! }, as: UTF8.self))
            }
            parts.append(["com", "net", "co.uk", "de", "xn--p1ai"].randomElement(using: &random)!)
            while parts.joined(separator: ".").utf8.count > 253 { parts.removeFirst() }
            return try! QueryName.parse(parts.joined(separator: "."))
        }
        var lists: [[DomainName]] = Array(repeating: [], count: listCount)
        var listed: [DomainName] = []
        for _ in 0..<2000 {
            let entry = name(1...4)
            lists[Int.random(in: 0..<listCount, using: &random)].append(entry)
            listed.append(entry)
        }
        let scratch = try ScratchDirectory()
        let all = try Self.strategies(lists, scratch: scratch)
        let trie = all[0].1
        var matched = 0
        for index in 0..<4000 {
            let base = listed.randomElement(using: &random)!
            let query: DomainName
            switch index % 3 {
            case 0: query = base
            case 1: query = (try? QueryName.parse("s\(index)." + base.description)) ?? base
            default: query = name(0...6)
            }
            let expected = trie.match(query)
            if expected != MatchDepths() { matched += 1 }
            for (strategy, matcher) in all {
                if strategy != all[0].0 { #expect(matcher.match(query) == expected, "\(strategy): \(query)") }
                #expect(Self.inPlace(matcher, query) == expected, "\(strategy), in place: \(query)")
            }
        }
        #expect(matched > 2000)
    }

    @Test func everyMixHasTheSameHitsForEveryStrategy() throws {
        var synthetic = SplitMix(state: 7)
        func label() -> String {
            String(
                decoding: (0..<(3 + Int(synthetic.next() % 9))).map { _ in UInt8(97 + synthetic.next() % 26) },
                as: UTF8.self)
        }
        let listed = (0..<3000).map { _ in try! QueryName.parse(label() + "." + label() + ".com") }
        let popular = (0..<1000).map { _ in try! QueryName.parse("www." + label() + "pop.net") }
        let scratch = try ScratchDirectory()
        let all = try Self.strategies([listed], scratch: scratch)
        for mix in QueryMix.allCases {
            let queries = mix.queries(listed: listed, popular: popular, count: 5000)
            #expect(queries.count == 5000)
            let hits = all.map { Measure.hits(of: $0.1, QueryArena(queries)) }
            #expect(Set(hits).count == 1, "\(mix): \(zip(all.map(\.0), hits).map { "\($0)=\($1)" })")
            // The arena's names are the mix's, each read whole: the count of names matched
            // one by one is the same.
            #expect(hits[0] == queries.filter { !all[0].1.match($0).isEmpty }.count, "\(mix)")
            switch mix {
            case .popular: #expect(hits[0] == queries.count / 10 || abs(hits[0] - queries.count / 10) < 200)
            case .hits: #expect(hits[0] == queries.count)
            case .deep, .hostile: #expect(hits[0] > queries.count / 3 && hits[0] < queries.count)
            }
            if mix == .hostile {
                #expect(queries.contains { $0.labelCount >= 120 })
                #expect(queries.contains { $0.bytes.count >= 250 })
            }
        }
    }
}
