import DomainMatch
import Policy
import Testing

/// The safe-search table of docs/decisions.md#safe-search, row by row, and names beside
/// its rows that must stay as they are.
@Suite struct SafeSearchTableTests {
    static let rewritten: [(name: String, target: String)] = [
        ("www.google.com", "forcesafesearch.google.com"), ("google.co.uk", "forcesafesearch.google.com"),
        ("www.google.com.au", "forcesafesearch.google.com"), ("ipv4.google.com", "forcesafesearch.google.com"),
        ("ipv6.google.com", "forcesafesearch.google.com"), ("images.google.com", "forcesafesearch.google.com"),
        ("encrypted.google.com", "forcesafesearch.google.com"), ("www.bing.com", "strict.bing.com"),
        ("edgeservices.bing.com", "strict.bing.com"), ("duckduckgo.com", "safe.duckduckgo.com"),
        ("start.duckduckgo.com", "safe.duckduckgo.com"), ("html.duckduckgo.com", "safe.duckduckgo.com"),
        ("lite.duckduckgo.com", "safe.duckduckgo.com"), ("www.yandex.com.tr", "familysearch.yandex.ru"),
        ("pixabay.com", "safesearch.pixabay.com"), ("www.ecosia.org", "strict-safe-search.ecosia.org"),
        ("search.brave.com", "safesearch.brave.com"), ("m.youtube.com", "restrict.youtube.com"),
    ]

    @Test(arguments: rewritten)
    func rewrites(_ row: (name: String, target: String)) throws {
        let target = SafeSearch.target(for: try QueryName.parse(row.name), strictYouTube: true)
        #expect(target?.description == row.target)
    }

    /// Other hosts of the same brands serve no search (mail, maps) or are another site's
    /// names that only look alike.
    @Test(arguments: [
        "mail.google.com", "maps.google.com", "ipv4.google.com.example", "images.google.co.uk.example",
        "safe.duckduckgo.com", "links.duckduckgo.com", "html.duckduckgo.com.example", "lite.duckduckgo.org",
        "forcesafesearch.google.com",
    ])
    func leavesAlone(_ name: String) throws {
        #expect(SafeSearch.target(for: try QueryName.parse(name), strictYouTube: true) == nil)
    }
}
