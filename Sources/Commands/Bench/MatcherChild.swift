import Blocklists
import CSystem
import DomainMatch
import EventLoop
import Gateway
import Glibc
import MatcherBench
import SystemIO

/// The measurements of `bench matcher` that need a fresh process each, so one cannot
/// pollute another (docs/benchmarks.md#bench-matcher), printing `key=value`:
/// `bench matcher-child build STRATEGY OUT LIST…` builds from text (and writes the file of
/// `trie` and `sqlite` to OUT); `bench matcher-child load STRATEGY FILE QUERIES LIST…`
/// loads the file (or builds in memory) and measures resident growth after a full pass.
enum MatcherChild: Command {
    static let name = "matcher-child"
    static let summary = ""
    static let usage =
        "usage: phosra-gate bench matcher-child build STRATEGY OUT LIST... | load STRATEGY FILE QUERIES LIST..."

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        guard words.count >= 4, let strategy = Strategy(rawValue: words[1]) else {
            console.err(usage)
            return 1
        }
        do {
            switch words[0] {
            case "build":
                try build(strategy, output: words[2], lists: Array(words.dropFirst(3)), console: console, clock: clock)
            case "load" where words.count >= 5:
                try load(
                    strategy, file: words[2], queries: words[3], lists: Array(words.dropFirst(4)), console: console,
                    clock: clock)
            default:
                console.err(usage)
                return 1
            }
            return 0
        } catch {
            console.err("phosra-gate bench matcher-child: \(error)")
            return 1
        }
    }

    /// Builds from text, one list per file; reports time and the peak growth of memory.
    private static func build(
        _ strategy: Strategy, output: String, lists: [String], console: some Console, clock: any Clock
    ) throws(GatewayError) {
        let baseline = ProcessMemory.resident()
        let start = clock.now()
        var structure = 0
        var kept: (any NameMatcher)?
        do {
            switch strategy {
            case .trie, .trieV3:
                let total = lists.reduce(0) { $0 + Int((try? Files.status($1))?.size ?? 0) }
                var builder = LabelTrieBuilder(listCount: lists.count, expectedNames: total / 20)
                for (index, path) in lists.enumerated() {
                    var scanner = ListFileScanner()
                    let sink: (ListItem) -> Void = {
                        if case .name(let name) = $0 { builder.insert(name, list: index) }
                    }
                    try Files.forEachChunk(path) { chunk in scanner.feed(chunk, sink: sink) }
                    _ = scanner.finish(sink: sink)
                }
                let bytes = builder.build(
                    listNames: (0..<lists.count).map { "list\($0)" },
                    filterBitsPerNode: strategy.filterBitsPerNode)
                structure = bytes.count
                try Files.writeAtomically(output, bytes: bytes.buffer)
            case .sqlite:
                try SQLiteMatcher.create(path: output, lists: try BenchWorkload.read(lists))
                structure = Int(try Files.status(output).size)
            default:
                kept = strategy.buildInMemory(try BenchWorkload.read(lists))
            }
        } catch let error as SystemError {
            throw .usage("\(error)")
        } catch {
            throw .usage("\(error)")
        }
        let seconds = clock.seconds(since: start)
        console.out("build_seconds=\(seconds)")
        console.out("build_peak_bytes=\(ProcessMemory.peakResident() - baseline)")
        console.out("structure_bytes=\(structure)")
        withExtendedLifetime(kept) {}
    }

    /// Loads the file (time to the first correct lookup) or builds in memory, then one full
    /// pass over the queries; reports the resident growth from before the load.
    private static func load(
        _ strategy: Strategy, file: String, queries: String, lists: [String], console: some Console, clock: any Clock
    ) throws(GatewayError) {
        var names: [DomainName] = []
        do {
            for line in String(decoding: try Files.read(queries), as: UTF8.self).split(separator: "\n") {
                if let name = try? QueryName.parse(String(line)) { names.append(name) }
            }
        } catch { throw .usage("\(error)") }
        guard let first = names.first else { return }
        var inputs: [[DomainName]] = []
        if !strategy.hasFile {
            do { inputs = try BenchWorkload.read(lists) } catch { throw .usage("\(error)") }
        }
        let arena = QueryArena(names)
        let baseline = ProcessMemory.resident()
        let start = clock.now()
        let matcher =
            strategy.hasFile ? try open(strategy, file, listCount: lists.count) : strategy.buildInMemory(inputs)!
        _ = matcher.match(first)
        let loadSeconds = clock.seconds(since: start)
        // What building in memory freed goes back to the system, so only what the
        // strategy keeps is counted.
        _ = malloc_trim(0)
        let hits = Measure.hits(of: matcher, arena)
        if strategy.hasFile { console.out("load_seconds=\(loadSeconds)") }
        console.out("resident_growth=\(ProcessMemory.resident() - baseline)")
        console.out("hits=\(hits)")
        withExtendedLifetime(inputs) {}
    }

    /// A strategy's file: the trie mapped and checked as `run` does, the trie without its
    /// filter the same way, the SQLite database opened.
    static func open(_ strategy: Strategy, _ file: String, listCount: Int) throws(GatewayError) -> any NameMatcher {
        do {
            switch strategy {
            case .trie, .trieV3: return try ListCache.load(file)
            case .sqlite: return try SQLiteMatcher(path: file, listCount: listCount)
            default: throw GatewayError.usage("\(strategy.rawValue) has no file")
            }
        } catch let error as GatewayError {
            throw error
        } catch {
            throw .usage("\(error)")
        }
    }

    /// `key=value` lines into a dictionary.
    static func parse(_ text: String) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }
}
