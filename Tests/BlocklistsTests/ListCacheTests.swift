import DomainMatch
import Foundation
import Policy
import SystemIO
import Testing

@testable import Blocklists

/// The compiled list file: a truncated, corrupt, foreign or stale file is detected and
/// rebuilt from the text lists, never served, and never crashes a reader.
@Suite(.serialized) struct ListCacheTests {
    let root: URL
    let inputs: ListInputs
    let state: String

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("cache-\(UUID().uuidString)")
        var adult = "# adult\n"
        var gambling = ""
        for index in 0..<3000 { adult += "site\(index).adult-example.com\n" }
        for index in 0..<500 { gambling += "0.0.0.0 bet\(index).example.net casino\(index).example.org\n" }
        for (path, text) in ["lists/adult/a.txt": adult, "lists/gambling/b.txt": gambling] {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        inputs = try ListInputs.scan(root.appendingPathComponent("lists").path)
        state = root.appendingPathComponent("state").path
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
    }

    private var cachePath: String { ListCache.path(stateDirectory: state) }

    private func expectCorrect(_ lists: CategoryLists) throws {
        #expect(lists.trie.nameCount == 4000)
        #expect(
            lists.trie.entry(
                in: Category.adult.rawValue, covering: try QueryName.parse("www.site42.adult-example.com"))?
                .description == "site42.adult-example.com")
        #expect(
            lists.trie.entry(in: Category.gambling.rawValue, covering: try QueryName.parse("casino7.example.org"))
                != nil)
        #expect(lists.trie.match(try QueryName.parse("example.org")) == MatchDepths())
    }

    /// Opens through the cache and returns the warnings it gave.
    private func open() throws -> (CategoryLists, [String]) {
        var warnings: [String] = []
        let lists = ListCache.open(inputs, stateDirectory: state, writeBack: true, warnings: &warnings)
        try expectCorrect(lists)
        return (lists, warnings)
    }

    @Test func writesThenServesTheCache() throws {
        let (_, first) = try open()
        #expect(first.isEmpty)
        #expect(FileManager.default.fileExists(atPath: cachePath))
        let loaded = try ListCache.load(cachePath, expectedKey: inputs.key)
        try expectCorrect(CategoryLists(trie: loaded, present: inputs.present))
        let (_, second) = try open()
        #expect(second.isEmpty)
    }

    /// The path of the file mapped at `address` in this process, from /proc/self/maps;
    /// nil for memory no file backs.
    private func mappedFile(at address: UnsafeRawPointer) throws -> String? {
        let target = UInt(bitPattern: address)
        // Read to the end by the project's reader: a procfs file has no size to go by.
        for line in String(decoding: try Files.read("/proc/self/maps"), as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let range = fields[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            guard range.count == 2, range[0] <= target, target < range[1] else { continue }
            return fields.count >= 6 ? fields[5...].joined(separator: " ") : nil
        }
        return nil
    }

    @Test func listsBuiltAndWrittenAreServedFromTheFile() throws {
        let (built, warnings) = try open()
        #expect(warnings.isEmpty)
        // Not the image the build made in memory: the file it wrote, mapped.
        #expect(try mappedFile(at: built.trie.bytes.base) == cachePath)
        #expect(built.stats[.adult]?.names == 3000)
        let (cached, _) = try open()
        #expect(try mappedFile(at: cached.trie.bytes.base) == cachePath)
        // Without writing back there is no file to serve from.
        var none: [String] = []
        let unwritten = ListCache.open(inputs, stateDirectory: nil, writeBack: false, warnings: &none)
        try expectCorrect(unwritten)
        #expect(try mappedFile(at: unwritten.trie.bytes.base) == nil)
    }

    @Test func changedInputsMakeTheCacheStale() throws {
        _ = try open()
        let file = root.appendingPathComponent("lists/adult/a.txt")
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("extra.adult-example.com\n".utf8))
        try handle.close()
        let changed = try ListInputs.scan(root.appendingPathComponent("lists").path)
        #expect(changed.key != inputs.key)
        #expect(throws: ListCacheError.stale(path: cachePath)) {
            try ListCache.load(cachePath, expectedKey: changed.key)
        }
        var warnings: [String] = []
        let rebuilt = ListCache.open(changed, stateDirectory: state, writeBack: true, warnings: &warnings)
        #expect(rebuilt.trie.nameCount == 4001)
        #expect(warnings.count == 1 && warnings[0].contains("built from other list files"))
    }

    @Test func truncatedFilesAreRebuilt() throws {
        _ = try open()
        let good = try Data(contentsOf: URL(fileURLWithPath: cachePath))
        for length in [0, 1, 8, 16, 63, 64, 100, 136, good.count / 2, good.count - 1] {
            try good.prefix(length).write(to: URL(fileURLWithPath: cachePath))
            #expect(throws: ListCacheError.self) { try ListCache.load(cachePath) }
            let (_, warnings) = try open()
            #expect(warnings.count == 1, "length \(length): \(warnings)")
            // Rewritten whole: built again (under a seed of its own, so not the same bytes)
            // and served.
            #expect(try ListCache.load(cachePath, expectedKey: inputs.key).nameCount == 4000)
        }
    }

    @Test func oneFlippedByteInEachPartIsDetected() throws {
        _ = try open()
        let good = try Data(contentsOf: URL(fileURLWithPath: cachePath))
        let trie = try ListCache.load(cachePath)
        // A section's offset and length, from its entry in the section table.
        func section(_ kind: TrieLayout.Section) -> (offset: Int, length: Int) {
            let word = { (at: Int) in (0..<8).reduce(0) { $0 | Int(good[at + $1]) << (8 * $1) } }
            let entry = (0..<6).map { 64 + $0 * 24 }.first { good[$0] == UInt8(kind.rawValue) }!
            return (word(entry + 8), word(entry + 16))
        }
        let slots = section(.slots)
        let filter = section(.filter)
        #expect(filter.length == trie.filterWords * 8)
        let places: [(String, Int)] = [
            ("magic", 3), ("version", 8), ("section count", 12), ("checksum", 20), ("size", 25), ("input key", 33),
            ("node count", 40), ("capacity", 45), ("list count", 48), ("name count", 53), ("section table", 64 + 8),
            ("slots", slots.offset + 5), ("slots end", slots.offset + slots.length - 3),
            ("slot masks", section(.slotMasks).offset + section(.slotMasks).length / 2),
            ("list names", section(.listNames).offset + 2), ("filter", filter.offset + 5),
            ("filter end", filter.offset + filter.length - 3), ("mask table", section(.masks).offset + 1),
            ("seed", section(.seed).offset + 6),
        ]
        for (part, offset) in places {
            var bad = good
            bad[offset] ^= 0x40
            try bad.write(to: URL(fileURLWithPath: cachePath))
            #expect(throws: ListCacheError.self, "\(part)") { try ListCache.load(cachePath, expectedKey: inputs.key) }
            let (_, warnings) = try open()
            #expect(warnings.count == 1, "\(part): \(warnings)")
        }
    }

    @Test func aForeignVersionIsRebuilt() throws {
        _ = try open()
        var bad = try Data(contentsOf: URL(fileURLWithPath: cachePath))
        bad[8] = 99
        try bad.write(to: URL(fileURLWithPath: cachePath))
        do {
            _ = try ListCache.load(cachePath)
            Issue.record("served a foreign version")
        } catch {
            #expect(error == .invalid(path: cachePath, .unsupportedVersion(99)))
        }
        let (_, warnings) = try open()
        #expect(warnings.first?.contains("format version 99") == true)
    }

    @Test func aFileReplacedWhileMappedNeitherCrashesNorIsServedBad() throws {
        _ = try open()
        let mapped = try ListCache.load(cachePath, expectedKey: inputs.key)
        let queries = (0..<3000).map { try! QueryName.parse("www.site\($0).adult-example.com") }

        // Replaced by rename (how phosra-gate and package managers replace files): the
        // old mapping keeps answering from the old inode.
        let other = root.appendingPathComponent("other.trie").path
        try Data(repeating: 0xAB, count: 4096).write(to: URL(fileURLWithPath: other))
        #expect(rename(other, cachePath) == 0)
        #expect(queries.allSatisfy { mapped.match($0)[Category.adult.rawValue] == 3 })
        let (_, warnings) = try open()
        #expect(warnings.count == 1)

        // Overwritten in place under a live mapping: answers may be wrong, but every read
        // stays inside the mapping and every probe ends.
        let live = try ListCache.load(cachePath, expectedKey: inputs.key)
        let size = live.bytes.count
        var random = SplitMixTest(state: 7)
        let garbage = Data((0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: cachePath))
        try handle.write(contentsOf: garbage)
        try handle.close()
        var depths = MatchDepths()
        for query in queries { live.match(query, into: &depths) }
        let (_, after) = try open()
        #expect(after.count == 1, "the overwritten file is rebuilt")
    }
}

struct SplitMixTest {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        return z ^ (z >> 27)
    }
}
