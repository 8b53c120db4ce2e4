import DomainMatch
import SystemIO

/// The lists and the query mix of `bench matcher` (docs/benchmarks.md#targets): 90 % names from the
/// queries file that the lists do not cover, 10 % listed names and random subdomains of
/// them, in a fixed pseudo-random order.
struct BenchWorkload {
    let listFiles: [String]
    let listedNames: Set<String>
    let queries: [DomainName]
    let queryFile: String
    let description: String

    static let mixSize = 500_000
    static let syntheticNames = 1_000_000

    static func prepare(_ options: BenchMatcherCommand.Options, scratch: String) throws(GatewayError) -> BenchWorkload {
        var synthetic = SyntheticLists(seed: 20_261_130)
        var listFiles = options.lists
        if listFiles.isEmpty {
            let path = scratch + "/synthetic-list.txt"
            var text: [UInt8] = []
            text.reserveCapacity(syntheticNames * 20)
            for _ in 0..<syntheticNames { text += Array(synthetic.listedName().utf8) + [UInt8(ascii: "\n")] }
            try write(path, text)
            listFiles = [path]
        }
        var listed: [DomainName] = []
        var names = Set<String>()
        for path in listFiles {
            let bytes: [UInt8]
            do { bytes = try Files.read(path) } catch { throw .flag("--list", "\(error)") }
            _ = ListFile.parse(bytes) { entry in
                if case .name(let name) = entry, names.insert(name.description).inserted { listed.append(name) }
            }
        }
        guard !listed.isEmpty else { throw .flag("--list", "the lists hold no names") }

        var popular: [DomainName] = []
        if let path = options.queries {
            let bytes: [UInt8]
            do { bytes = try Files.read(path) } catch { throw .flag("--queries", "\(error)") }
            _ = ListFile.parse(bytes) { entry in
                if case .name(let name) = entry, !covered(name, by: names) { popular.append(name) }
            }
        } else {
            while popular.count < 100_000 {
                let name = try! QueryName.parse(synthetic.popularName())
                if !covered(name, by: names) { popular.append(name) }
            }
        }
        guard !popular.isEmpty else { throw .flag("--queries", "every query is covered by the lists") }

        var queries: [DomainName] = []
        queries.reserveCapacity(mixSize)
        for index in 0..<mixSize {
            let roll = synthetic.next() % 100
            if roll < 90 {
                queries.append(popular[index % popular.count])
            } else {
                let name = listed[Int(synthetic.next() % UInt64(listed.count))]
                let sub = roll < 95 ? nil : try? QueryName.parse("s\(synthetic.next() % 10_000)." + name.description)
                queries.append(sub ?? name)
            }
        }
        let queryFile = scratch + "/queries.txt"
        try write(queryFile, Array(queries.map(\.description).joined(separator: "\n").utf8))
        let source =
            options.lists.isEmpty ? "synthetic list" : options.lists.map { Files.base($0) }.joined(separator: ", ")
        let querySource = options.queries.map { Files.base($0) } ?? "synthetic queries"
        return BenchWorkload(
            listFiles: listFiles, listedNames: names, queries: queries, queryFile: queryFile,
            description: "\(source); \(querySource)")
    }

    /// Whether a suffix of `name` is listed (the naive check, used once per query here).
    private static func covered(_ name: DomainName, by names: Set<String>) -> Bool {
        NaiveMatcher(names: names).matches(name.description)
    }

    private static func write(_ path: String, _ bytes: [UInt8]) throws(GatewayError) {
        do { try Files.writeAtomically(path, bytes) } catch { throw .usage("\(error)") }
    }
}

extension Files {
    /// The last path component.
    static func base(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }
}
