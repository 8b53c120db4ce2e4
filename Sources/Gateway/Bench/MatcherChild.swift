import Blocklists
import DomainMatch
import EventLoop
import SystemIO

/// The measurements of `bench matcher` that need a fresh process each, so one cannot
/// pollute another (docs/benchmarks.md#targets): `bench matcher-child build|load …`, printing `key=value`.
enum MatcherChild {
    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        guard let mode = words.first else { return 1 }
        do {
            switch mode {
            case "build" where words.count >= 3:
                try build(output: words[1], lists: Array(words.dropFirst(2)), console: console, clock: clock)
            case "load" where words.count == 3:
                try load(compiled: words[1], queries: words[2], console: console, clock: clock)
            default:
                console.err("usage: phosra-gate bench matcher-child build OUT LIST... | load FILE QUERIES")
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
        output: String, lists: [String], console: some Console, clock: any Clock
    ) throws(SystemError) {
        let baseline = ProcessMemory.resident()
        let start = clock.now()
        let total = lists.reduce(0) { $0 + Int((try? Files.status($1))?.size ?? 0) }
        var builder = LabelTrieBuilder(listCount: min(lists.count, TrieLayout.maxLists), expectedNames: total / 20)
        var progress = Progress(total: Int64(total), label: "building")
        var done: Int64 = 0
        for (index, path) in lists.enumerated() {
            var scanner = ListFileScanner()
            let list = min(index, TrieLayout.maxLists - 1)
            let sink: (ListItem) -> Void = { if case .name(let name) = $0 { builder.insert(name, list: list) } }
            try Files.forEachChunk(path) { chunk in
                scanner.feed(chunk, sink: sink)
                done += Int64(chunk.count)
                progress.update(done)
            }
            _ = scanner.finish(sink: sink)
        }
        let names = (0..<builder.listCount).map { "list\($0)" }
        let bytes = builder.build(listNames: names)
        let seconds = clock.seconds(since: start)
        let peak = ProcessMemory.peakResident() - baseline
        progress.finish()
        try Files.writeAtomically(output, bytes: bytes.buffer)
        console.out("build_seconds=\(seconds)")
        console.out("build_peak_bytes=\(peak)")
        console.out("structure_bytes=\(bytes.count)")
    }

    /// Maps the compiled file: time to the first correct lookup, and resident growth
    /// after one full pass over the queries.
    private static func load(
        compiled: String, queries: String, console: some Console,
        clock: any Clock
    ) throws(SystemError) {
        var names: [DomainName] = []
        for line in String(decoding: try Files.read(queries), as: UTF8.self).split(separator: "\n") {
            if let name = try? QueryName.parse(String(line)) { names.append(name) }
        }
        guard let first = names.first else { return }
        let baseline = ProcessMemory.resident()
        let start = clock.now()
        let trie: LabelTrie
        do {
            trie = try ListCache.load(compiled)
        } catch {
            console.err("\(error)")
            return
        }
        var depths = MatchDepths()
        trie.match(first, into: &depths)
        let loadSeconds = clock.seconds(since: start)
        var hits = 0
        for name in names {
            trie.match(name, into: &depths)
            if depths != MatchDepths() { hits += 1 }
        }
        console.out("load_seconds=\(loadSeconds)")
        console.out("resident_growth=\(ProcessMemory.resident() - baseline)")
        console.out("names=\(trie.nameCount)")
        console.out("hits=\(hits)")
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
