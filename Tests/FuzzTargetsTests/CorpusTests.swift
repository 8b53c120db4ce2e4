import Foundation
import FuzzTargets
import Testing

/// Every kept input through its target in the ordinary test run: the seed corpus
/// (`Tests/Fuzz/corpus/<target>/`) and every input that ever crashed a target
/// (`Tests/Fuzz/regressions/<target>/`), so a fixed bug stays fixed (docs/fuzzing.md).
@Suite struct CorpusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    static func files(_ folder: String, _ target: String) -> [URL] {
        let directory = root.appendingPathComponent(folder).appendingPathComponent(target)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
    }

    static var targetNames: [String] { FuzzTargets.all.map(\.name) }

    @Test(arguments: targetNames) func seedCorpusHolds(_ name: String) throws {
        let files = Self.files("corpus", name)
        #expect(!files.isEmpty, "no seeds for \(name)")
        try Self.run(name, files)
    }

    @Test(arguments: targetNames) func regressionsHold(_ name: String) throws {
        try Self.run(name, Self.files("regressions", name))
    }

    /// Folders under corpus/ and regressions/ are named after targets that exist.
    @Test func foldersNameTargets() throws {
        for folder in ["corpus", "regressions"] {
            let path = Self.root.appendingPathComponent(folder).path
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            for name in names where !name.hasPrefix(".") {
                #expect(Self.targetNames.contains(name), "\(folder)/\(name) names no target")
            }
        }
    }

    static func run(_ name: String, _ files: [URL]) throws {
        let target = try #require(FuzzTargets.named(name))
        for file in files {
            let input = [UInt8](try Data(contentsOf: file))
            do {
                try target.run(input)
            } catch {
                Issue.record("\(file.lastPathComponent): \(error)")
            }
        }
    }
}
