import Testing

@testable import DomainMatch

@Suite struct SetMatcherTests {
    private func names(_ list: [String]) -> [DomainName] { list.map { try! QueryName.parse($0) } }

    @Test func answersTheMostSpecificEntryPerList() throws {
        let matcher = SetMatcher(lists: [
            names(["example.com", "a.b.example.com"]),
            names(["b.example.com"]),
            names(["other.org"]),
        ])
        let depths = matcher.match(try QueryName.parse("x.a.b.example.com"))
        #expect(depths[0] == 4)
        #expect(depths[1] == 3)
        #expect(depths[2] == 0)
        #expect(matcher.entry(in: 0, covering: try QueryName.parse("www.example.com"))?.description == "example.com")
        #expect(matcher.entry(in: 0, covering: try QueryName.parse("badexample.com")) == nil)
        #expect(matcher.entry(in: 0, covering: try QueryName.parse("com")) == nil)
    }

    /// The lookup of bytes in place, which the set matcher answers through a `DomainName`
    /// made of them (the protocol's default), answers as the lookup of the name.
    @Test func bytesInPlaceAnswerAsTheName() throws {
        let matcher = SetMatcher(lists: [names(["example.com"]), names(["b.example.com", "org"])])
        for text in ["x.b.example.com", "example.com", "example.org", "com", "badexample.com"] {
            let name = try QueryName.parse(text)
            var depths = MatchDepths()
            name.bytes.withUnsafeBytes { matcher.match(bytes: $0, labelCount: name.labelCount, into: &depths) }
            #expect(depths == matcher.match(name), "\(text)")
        }
    }

    @Test func emptyMatcherMatchesNothing() throws {
        let matcher = SetMatcher(lists: [[], []])
        #expect(matcher.match(try QueryName.parse("example.com")) == MatchDepths())
    }
}
