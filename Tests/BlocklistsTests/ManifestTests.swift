import Foundation
import Policy
import Testing

@testable import Blocklists

@Suite struct ManifestTests {
    private func parse(_ sources: String, version: Int = 1) throws(ManifestError) -> Manifest {
        try Manifest.parse(Array(#"{"version": \#(version), "sources": [\#(sources)]}"#.utf8), path: "m.json")
    }

    private func problem(_ sources: String, version: Int = 1) -> String? {
        do {
            _ = try parse(sources, version: version)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func readsSourcesAndWhereTheirCopiesGo() throws {
        let manifest = try parse(
            """
            {"category": "porn", "name": "Block List Project - porn", "url": "https://example.org/porn.txt",
             "format": "domains", "licence": "Unlicense", "homepage": "https://example.org"},
            {"category": "ads", "name": "AdAway (default)", "url": "https://example.org/hosts",
             "format": "hosts", "licence": "CC-BY-3.0"},
            {"name": "DoH resolvers", "url": "https://example.org/doh.txt", "format": "addresses", "licence": "MIT"}
            """)
        #expect(manifest.sources.map(\.target) == [.category(.adult), .category(.ads), .dohAddresses])
        #expect(
            manifest.sources.map(\.file) == [
                "adult/block-list-project-porn.txt", "ads/adaway-default.txt", "doh-addresses.txt",
            ])
        #expect(manifest.sources[0].homepage == "https://example.org")
        #expect(manifest.sources[1].homepage == nil)
        #expect(manifest.sources[1].format == .hosts)
    }

    @Test func fileStems() {
        #expect(ListSource.fileStem("UT1 blacklists - drogue (drugs)") == "ut1-blacklists-drogue-drugs")
        #expect(ListSource.fileStem("  HaGeZi -- DoH/VPN/TOR  ") == "hagezi-doh-vpn-tor")
        #expect(ListSource.fileStem("../../etc/passwd") == "etc-passwd")
        #expect(ListSource.fileStem("Ünïcode ✓") == "n-code")
        #expect(ListSource.fileStem("---").isEmpty)
    }

    @Test func eachMistakeNamesTheSourceAndField() {
        let good = #""name": "A", "url": "https://e.org/a", "format": "domains", "licence": "MIT""#
        #expect(problem(#"{"category": "adult", \#(good)}"#) == nil)
        #expect(
            problem(#"{"category": "adult", \#(good)}"#, version: 2) == "m.json: version 2 is not supported (only 1)")
        #expect(
            problem(#"{"category": "shopping", \#(good)}"#)
                == "m.json: sources[0]: \"category\" must be a category id (shopping is not)")
        #expect(problem(#"{\#(good)}"#) == "m.json: sources[0]: \"category\" must be a category id (missing is not)")
        #expect(
            problem(
                #"{"category": "adult", "name": "A", "url": "http://e.org/a", "format": "domains", "licence": "MIT"}"#)
                == "m.json: sources[0]: \"url\" must be an https:// URL")
        #expect(
            problem(#"{"category": "adult", "name": "A", "url": "https://e.org/a", "format": "csv", "licence": "MIT"}"#)
                == "m.json: sources[0]: \"format\" must be one of domains, hosts, adblock, addresses, services")
        #expect(
            problem(
                #"{"category": "social", "name": "A", "url": "https://e.org/a", "format": "services", "licence": "MIT"}"#
            ) == "m.json: sources[0]: a service catalogue is not a category list: leave \"category\" out")
        #expect(
            problem(#"{"category": "adult", "name": "A", "url": "https://e.org/a", "format": "domains"}"#)
                == "m.json: sources[0]: \"licence\" is missing")
        #expect(
            problem(
                #"{"category": "adult", "name": "!!", "url": "https://e.org/a", "format": "domains", "licence": "MIT"}"#
            )
                == "m.json: sources[0]: \"name\" is missing or has no letter or digit")
        #expect(
            problem(
                #"{"category": "adult", "name": "A", "url": "https://e.org/a", "format": "addresses", "licence": "MIT"}"#
            )
                == "m.json: sources[0]: an addresses list feeds the firewall, not a category: leave \"category\" out")
        #expect(
            problem(#"{"category": "adult", \#(good)}, {"category": "porn", \#(good)}"#)
                == "m.json: sources[1]: its copy adult/a.txt would be the same file as sources[0]'s")
        #expect(problem(#"{"category": 3, \#(good)}"#) == "m.json: sources[0].category: wrong type")
        #expect(throws: ManifestError.self) { try Manifest.parse(Array("not json".utf8), path: "m.json") }
    }

    /// The manifest the project ships reads as a whole, every source with its own copy.
    @Test func theProjectsManifestParses() throws {
        let path = ListFolderTests.checkout.appendingPathComponent("blocklists/manifest.json").path
        let manifest = try Manifest.load(path)
        #expect(manifest.sources.count >= 30)
        #expect(Set(manifest.sources.map(\.file)).count == manifest.sources.count)
        #expect(
            Set(
                manifest.sources.compactMap { source -> Category? in
                    if case .category(let category) = source.target { return category }
                    return nil
                }) == Set(Category.allCases))
    }
}
