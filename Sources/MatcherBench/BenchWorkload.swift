import DomainMatch
import SystemIO

/// The inputs of `bench matcher` (docs/benchmarks.md#bench-matcher): the listed names of
/// the given lists (or a synthetic list), the subsets of each size, and the popular names
/// the lists do not cover (from `--queries`, or synthetic).
public struct BenchWorkload {
    /// Every listed (name, list) pair, in file order, distinct.
    public let listed: [(name: DomainName, list: Int)]
    public let listCount: Int
    public let popular: [DomainName]
    public let listSources: [String]
    public let querySource: String

    public static let syntheticNames = 1_000_000
    public static let seed: UInt64 = 20_261_130

    public static func prepare(_ options: BenchOptions, scratch: String) throws(BenchError) -> BenchWorkload {
        var synthetic = SyntheticLists(seed: seed)
        var listed: [(name: DomainName, list: Int)] = []
        var seen = Set<DomainName>()
        if options.lists.isEmpty {
            while listed.count < syntheticNames {
                let name = try! QueryName.parse(synthetic.listedName())
                if seen.insert(name).inserted { listed.append((name, 0)) }
            }
        }
        for (index, path) in options.lists.enumerated() {
            let bytes: [UInt8]
            do { bytes = try Files.read(path) } catch { throw .flag("--list", "\(error)") }
            var inFile = Set<DomainName>()
            _ = ListFile.parse(bytes) { entry in
                if case .name(let name) = entry, inFile.insert(name).inserted { listed.append((name, index)) }
            }
            seen.formUnion(inFile)
        }
        guard !listed.isEmpty else { throw .flag("--list", "the lists hold no names") }

        let all = HashedSuffixMatcher(lists: [Array(seen)])
        var popular: [DomainName] = []
        if let path = options.queries {
            let bytes: [UInt8]
            do { bytes = try Files.read(path) } catch { throw .flag("--queries", "\(error)") }
            _ = ListFile.parse(bytes) { entry in
                if case .name(let name) = entry, all.match(name)[0] == 0 { popular.append(name) }
            }
        } else {
            while popular.count < 100_000 {
                let name = try! QueryName.parse(synthetic.popularName())
                if all.match(name)[0] == 0 { popular.append(name) }
            }
        }
        guard !popular.isEmpty else { throw .flag("--queries", "every query is covered by the lists") }
        return BenchWorkload(
            listed: listed, listCount: max(1, options.lists.count), popular: popular,
            listSources: options.lists.isEmpty ? ["synthetic list"] : options.lists,
            querySource: options.queries ?? "synthetic popular names")
    }

    /// `size` names spread evenly over the listed ones (every k-th: the lists are often
    /// sorted, and a prefix would be one corner of the alphabet), then synthetic names to
    /// fill beyond them. Returns the lists and how many names are synthetic.
    public func subset(_ size: Int) -> (lists: [[DomainName]], synthetic: Int) {
        var lists: [[DomainName]] = Array(repeating: [], count: listCount)
        let taken = min(size, listed.count)
        for index in 0..<taken {
            let pick = listed[index * listed.count / taken]
            lists[pick.list].append(pick.name)
        }
        guard size > taken else { return (lists, 0) }
        var synthetic = SyntheticLists(seed: Self.seed ^ UInt64(size))
        var seen = Set(listed.map(\.name))
        var added = 0
        while added < size - taken {
            let name = try! QueryName.parse(synthetic.listedName())
            if seen.insert(name).inserted {
                lists[added % listCount].append(name)
                added += 1
            }
        }
        return (lists, added)
    }

    /// Writes one text file per list (a name a line) and returns their paths.
    public static func write(_ lists: [[DomainName]], prefix: String) throws(BenchError) -> [String] {
        var paths: [String] = []
        for (index, names) in lists.enumerated() {
            let path = "\(prefix)-list\(index).txt"
            var text: [UInt8] = []
            text.reserveCapacity(names.count * 20)
            for name in names {
                text += name.bytes
                text.append(UInt8(ascii: "\n"))
            }
            do { try Files.writeAtomically(path, text) } catch { throw .usage("\(error)") }
            paths.append(path)
        }
        return paths
    }

    /// Reads list files back into names, one list per file.
    public static func read(_ paths: [String]) throws(SystemError) -> [[DomainName]] {
        var lists: [[DomainName]] = []
        for path in paths {
            var names: [DomainName] = []
            _ = ListFile.parse(try Files.read(path)) { entry in
                if case .name(let name) = entry { names.append(name) }
            }
            lists.append(names)
        }
        return lists
    }
}

extension Files {
    /// The last path component.
    static func base(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }
}
