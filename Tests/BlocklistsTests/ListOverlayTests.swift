import Foundation
import Testing

@testable import Blocklists

/// The state directory's downloaded copies laid over the packaged folder.
@Suite struct ListOverlayTests {
    @Test func aStateCopyReplacesTheSameFileAndAddsTheOthers() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("overlay-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let files = [
            "packaged/adult/curated.txt": "a.example\n",
            "packaged/adult/source.txt": "old.example\n",
            "packaged/gaming/curated.txt": "g.example\n",
            "state/porn/source.txt": "new.example\nnewer.example\n",
            "state/ads/downloaded.txt": "ads.example\n",
        ]
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let packaged = try ListInputs.scan(root.appendingPathComponent("packaged").path)
        let state = try ListInputs.scan(root.appendingPathComponent("state").path)
        let both = packaged.overlaid(by: state)
        #expect(both.path == packaged.path)
        #expect(
            Set(both.files.map { $0.path.replacingOccurrences(of: root.path + "/", with: "") }) == [
                "packaged/adult/curated.txt", "packaged/gaming/curated.txt", "state/porn/source.txt",
                "state/ads/downloaded.txt",
            ])
        #expect(both.key != packaged.key)
        var warnings: [String] = []
        let lists = CategoryLists.build(both, warnings: &warnings)
        #expect(lists.trie.nameCount == 5)
        #expect(lists.present == [.adult, .gaming, .ads])
    }
}
