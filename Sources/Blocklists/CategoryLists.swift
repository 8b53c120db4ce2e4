import DomainMatch
import Policy
import SystemIO

/// The category lists as one label trie (list i = the category with raw value i), built
/// from the text files or mapped from the compiled cache. Shared by every profile.
public struct CategoryLists: Sendable {
    public let trie: LabelTrie
    public let present: Set<Category>
    /// Per-category line counts; empty when the lists came from the cache.
    public let stats: [Category: ListStats]

    public var categorySet: CategorySet<LabelTrie> { CategorySet(matcher: trie, present: present) }

    public static let listNames = Category.allCases.map(\.id)

    /// Reads every list file into a trie. Unreadable files are warnings. `progress` gets
    /// (bytes read, bytes in all) after each chunk.
    public static func build(
        _ inputs: ListInputs, warnings: inout [String],
        progress: ((Int64, Int64) -> Void)? = nil
    ) -> CategoryLists {
        let total = inputs.totalBytes
        // About 20 bytes a line in real lists: size the first table for the whole input.
        var builder = LabelTrieBuilder(listCount: listNames.count, expectedNames: Int(total / 20))
        var stats: [Category: ListStats] = [:]
        var done: Int64 = 0
        for file in inputs.files {
            var scanner = ListFileScanner()
            let list = file.category.rawValue
            let sink: (ListItem) -> Void = { item in
                if case .name(let name) = item { builder.insert(name, list: list) }
            }
            do {
                try Files.forEachChunk(file.path) { chunk in
                    scanner.feed(chunk, sink: sink)
                    done += Int64(chunk.count)
                    progress?(done, total)
                }
            } catch {
                warnings.append("\(file.path): \(error); skipped")
            }
            stats[file.category, default: ListStats()].add(scanner.finish(sink: sink))
        }
        let trie = try! LabelTrie(builder.build(listNames: listNames, inputKey: inputs.key), verifyChecksum: false)
        return CategoryLists(trie: trie, present: inputs.present, stats: stats)
    }

    /// Lists from a trie read elsewhere (the cache).
    public init(trie: LabelTrie, present: Set<Category>, stats: [Category: ListStats] = [:]) {
        self.trie = trie
        self.present = present
        self.stats = stats
    }
}
