import DomainMatch
import Foundation
import Testing
@testable import Blocklists
import Policy

@Suite struct ListFolderTests {
    static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    private func makeFolder(_ files: [String: String]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("lists-\(UUID().uuidString)")
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
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
        let folder = try ListFolder.load(root.path)
        #expect(folder.names[.adult]?.map(\.description).sorted() == ["a.example", "b.example", "c.example"])
        #expect(folder.names[.social]?.map(\.description) == ["d.example"])
        #expect(folder.ips[.social] == [IPAddress("203.0.113.9")!])
        #expect(folder.stats[.adult]?.skippedInvalid == 1)
        #expect(folder.stats[.social]?.skippedReserved == 1)
        #expect(folder.files.count == 3)
        #expect(folder.warnings == ["\(root.path)/shopping: not a category id or synonym; ignored"])
        let set = folder.categorySet()
        #expect(set.present == [.adult, .social])
        #expect(set.matcher.entry(in: Category.adult.rawValue, covering: try QueryName.parse("x.c.example"))?.description == "c.example")
    }

    @Test func unreadableFilesAreWarningsNotFatal() throws {
        let root = try makeFolder(["gambling/ok.txt": "bet.example\n"])
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("gambling/dir.txt"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("gambling/dangling.txt").path,
                                                   withDestinationPath: "/nonexistent/list.txt")
        let folder = try ListFolder.load(root.path)
        #expect(folder.names[.gambling]?.count == 1)
        #expect(folder.warnings.count == 1)
        #expect(folder.warnings.first?.contains("dangling.txt") == true)
    }

    @Test func aMissingOrPlainFileFolderIsAnError() throws {
        #expect(throws: ListFolderError.self) { try ListFolder.load("/nonexistent/lists") }
        let root = try makeFolder(["file": "x"])
        defer { try? FileManager.default.removeItem(at: root) }
        #expect(throws: ListFolderError.notADirectory(path: root.appendingPathComponent("file").path)) {
            try ListFolder.load(root.appendingPathComponent("file").path)
        }
    }

    @Test func theShippedListsAreCleanAndComplete() throws {
        let folder = try ListFolder.load(Self.checkout.appendingPathComponent("blocklists").path)
        #expect(folder.warnings.isEmpty)
        #expect(Set(folder.names.keys) == Set(Category.allCases))
        for category in Category.allCases {
            let stats = try #require(folder.stats[category])
            #expect(stats.skipped == 0, "\(category): \(stats.examples)")
            #expect(stats.names >= 20, "\(category) has \(stats.names) names")
        }
        // Never a safe-search host, the API or shared infrastructure.
        let all = folder.names.values.flatMap { $0 }
        for forbidden in ["google.com", "youtube.com", "bing.com", "duckduckgo.com", "phosra-api.fly.dev", "cloudflare.com",
                          "amazonaws.com", "wikipedia.org", "khanacademy.org", "apple.com", "microsoft.com"] {
            let name = try QueryName.parse(forbidden)
            #expect(!all.contains { name.isSubdomain(of: $0) }, "\(forbidden) is covered by a shipped list")
        }
    }

    @Test func theManifestNamesSourcesForEveryCategory() throws {
        let data = try Data(contentsOf: Self.checkout.appendingPathComponent("blocklists/manifest.json"))
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let sources = try #require(manifest["sources"] as? [[String: Any]])
        var covered = Set<Category>()
        for source in sources {
            let category = try #require(Category(name: source["category"] as? String ?? ""))
            covered.insert(category)
            #expect((source["url"] as? String)?.hasPrefix("https://") == true)
            #expect(["domains", "hosts", "adblock"].contains(source["format"] as? String ?? ""))
            #expect(!(source["licence"] as? String ?? "").isEmpty)
        }
        #expect(covered == Set(Category.allCases))
    }
}
