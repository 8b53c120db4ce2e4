import DomainMatch
import Foundation
import Policy
import Testing

@testable import Blocklists

@Suite struct ListFolderTests {
    static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private func makeFolder(_ files: [String: String]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("lists-\(UUID().uuidString)")
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        return root
    }

    @Test func readsCategoriesSynonymsAndWarns() throws {
        let root = try makeFolder([
            "adult/one.txt": "a.example\nb.example # comment\n",
            "Porn/two.txt": "||c.example^\nbad..entry\n",
            "social_networks/list.txt": "0.0.0.0 d.example localhost\n203.0.113.9\n",
            "adult/notes.md": "not.read.example\n",
            "shopping/list.txt": "shop.example\n",
            "README.txt": "top.level.example\n",
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let inputs = try ListInputs.scan(root.path)
        #expect(inputs.files.map(\.category) == [.adult, .adult, .social])
        #expect(inputs.warnings == ["\(root.path)/shopping: not a category id or synonym; ignored"])
        var warnings: [String] = []
        let lists = CategoryLists.build(inputs, warnings: &warnings)
        #expect(warnings.isEmpty)
        #expect(lists.trie.nameCount == 4)
        #expect(lists.stats[.adult]?.skippedInvalid == 1)
        #expect(lists.stats[.adult]?.names == 3)
        #expect(lists.stats[.social]?.skippedReserved == 1)
        #expect(lists.stats[.social]?.ipEntries == 1)
        let set = lists.categorySet
        #expect(set.present == [.adult, .social])
        for (name, category) in [("x.c.example", Category.adult), ("b.example", .adult), ("www.d.example", .social)] {
            #expect(set.matcher.entry(in: category.rawValue, covering: try QueryName.parse(name)) != nil, "\(name)")
        }
        #expect(set.matcher.match(try QueryName.parse("shop.example")) == MatchDepths())
    }

    @Test func unreadableFilesAreWarningsNotFatal() throws {
        let root = try makeFolder(["gambling/ok.txt": "bet.example\n"])
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("gambling/dir.txt"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("gambling/dangling.txt").path,
            withDestinationPath: "/nonexistent/list.txt")
        let inputs = try ListInputs.scan(root.path)
        var warnings = inputs.warnings
        let lists = CategoryLists.build(inputs, warnings: &warnings)
        #expect(lists.trie.nameCount == 1)
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("dangling.txt") == true)
    }

    @Test func aMissingOrPlainFileFolderIsAnError() throws {
        #expect(throws: ListFolderError.self) { try ListInputs.scan("/nonexistent/lists") }
        let root = try makeFolder(["file": "x"])
        defer { try? FileManager.default.removeItem(at: root) }
        #expect(throws: ListFolderError.notADirectory(path: root.appendingPathComponent("file").path)) {
            try ListInputs.scan(root.appendingPathComponent("file").path)
        }
    }

    @Test func theShippedListsAreCleanAndComplete() throws {
        let inputs = try ListInputs.scan(Self.checkout.appendingPathComponent("blocklists").path)
        #expect(inputs.warnings.isEmpty)
        #expect(inputs.present == Set(Category.allCases))
        var warnings: [String] = []
        let lists = CategoryLists.build(inputs, warnings: &warnings)
        for category in Category.allCases {
            let stats = try #require(lists.stats[category])
            #expect(stats.skipped == 0, "\(category): \(stats.examples)")
            #expect(stats.names >= 20, "\(category) has \(stats.names) names")
        }
        // Never a safe-search host, the API or shared infrastructure, nor anything below them.
        for forbidden in [
            "google.com", "www.google.com", "youtube.com", "bing.com", "duckduckgo.com", "phosra-api.fly.dev",
            "cloudflare.com", "amazonaws.com", "wikipedia.org", "khanacademy.org", "apple.com", "microsoft.com",
        ] {
            #expect(
                lists.trie.match(try QueryName.parse(forbidden)) == MatchDepths(),
                "\(forbidden) is covered by a shipped list")
        }
    }

    /// The `proxy` folder's three files (docs/blocklists.md#the-proxy-category) are read, and
    /// their names, and names below them, match with the entry as the rule; the hosts next
    /// to them that a family needs do not.
    @Test func theProxyFolderCoversCachesTunnelsAndDynamicDNS() throws {
        let inputs = try ListInputs.scan(Self.checkout.appendingPathComponent("blocklists").path)
        let proxyFiles = inputs.files.filter { $0.category == .proxy }.map {
            URL(fileURLWithPath: $0.path).lastPathComponent
        }
        #expect(Set(proxyFiles) == ["curated.txt", "tunnels.txt", "dynamic-dns.txt"])
        var warnings: [String] = []
        let lists = CategoryLists.build(inputs, warnings: &warnings)
        let matcher = lists.categorySet.matcher
        let covered: [(name: String, entry: String)] = [
            ("en-m-wikipedia-org.translate.goog", "translate.goog"),
            ("translate.googleusercontent.com", "translate.googleusercontent.com"),
            ("translated.turbopages.org", "translated.turbopages.org"),
            ("pub-example-com.cdn.ampproject.org", "cdn.ampproject.org"),
            ("www.bing-amp.com", "bing-amp.com"),
            ("abc123.ngrok-free.app", "ngrok-free.app"), ("abc123.ngrok.io", "ngrok.io"),
            ("random-words-here.trycloudflare.com", "trycloudflare.com"),
            ("kids-proxy.tail1234.ts.net", "ts.net"), ("abcd1234-8080.euw.devtunnels.ms", "devtunnels.ms"),
            ("6b62ad7472b661.lhr.life", "lhr.life"), ("name.serveousercontent.com", "serveousercontent.com"),
            ("rnxyz-1-2-3-4.a.free.pinggy.link", "pinggy.link"), ("brown-colts-sneeze.loca.lt", "loca.lt"),
            ("myshare.share.zrok.io", "share.zrok.io"), ("bore.pub", "bore.pub"),
            ("site.sharedwithexpose.com", "sharedwithexpose.com"), ("x.tunnelmole.net", "tunnelmole.net"),
            ("myproxy.duckdns.org", "duckdns.org"), ("home.ddns.net", "ddns.net"), ("cam.hopto.org", "hopto.org"),
            ("me.zapto.org", "zapto.org"), ("box.dynu.net", "dynu.net"), ("host.mooo.com", "mooo.com"),
            ("old.dyndns.org", "dyndns.org"), ("pc.homeip.net", "homeip.net"), ("a.dns04.com", "dns04.com"),
            ("b.duia.eu", "duia.eu"), ("c.linkpc.net", "linkpc.net"), ("d.dedyn.io", "dedyn.io"),
            ("vpn.nordvpn.com", "nordvpn.com"),
        ]
        for (name, entry) in covered {
            #expect(
                matcher.entry(in: Category.proxy.rawValue, covering: try QueryName.parse(name))?.description == entry,
                "\(name)")
        }
        for name in [
            "translate.google.com", "ampproject.org", "amp.dev", "tailscale.com", "login.tailscale.com",
            "controlplane.tailscale.com", "ngrok.com", "noip.com", "github.dev", "cloudflare.com", "bing.com",
        ] {
            #expect(matcher.entry(in: Category.proxy.rawValue, covering: try QueryName.parse(name)) == nil, "\(name)")
        }
    }

    /// The built-in bypass list is checked before the `proxy` lists, at every level: an entry
    /// on both would only ever be named as the built-in one.
    @Test func theProxyListsDoNotRepeatTheBuiltInBypassList() throws {
        let inputs = try ListInputs.scan(Self.checkout.appendingPathComponent("blocklists").path)
        var warnings: [String] = []
        let trie = CategoryLists.build(inputs, warnings: &warnings).trie
        for entry in BypassList.entries {
            #expect(trie.match(entry)[Category.proxy.rawValue] != entry.labelCount, "\(entry) is in both")
        }
    }

    @Test func theManifestNamesSourcesForEveryCategory() throws {
        let data = try Data(contentsOf: Self.checkout.appendingPathComponent("blocklists/manifest.json"))
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let sources = try #require(manifest["sources"] as? [[String: Any]])
        var covered = Set<Category>()
        for source in sources {
            #expect((source["url"] as? String)?.hasPrefix("https://") == true)
            // An address list feeds the firewall, not a category (docs/blocklists.md#manifest).
            if source["format"] as? String == "addresses" {
                #expect(source["category"] == nil)
                continue
            }
            let category = try #require(Category(name: source["category"] as? String ?? ""))
            covered.insert(category)
            #expect(["domains", "hosts", "adblock"].contains(source["format"] as? String ?? ""))
            #expect(!(source["licence"] as? String ?? "").isEmpty)
        }
        #expect(covered == Set(Category.allCases))
    }
}
