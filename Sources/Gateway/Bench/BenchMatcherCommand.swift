import Blocklists
import Config
import Dispatch
import DomainMatch
import EventLoop
import Glibc
import SystemIO

/// `phosra-gate bench matcher`: the matcher's figures of docs/benchmarks.md#targets on given or synthetic
/// lists, the naive baseline beside it on the same queries.
enum BenchMatcherCommand {
    static let usage = """
        usage: phosra-gate bench matcher [--list FILE]... [--queries FILE] [--seconds N] [--threads N] [--json]
        """

    struct Options {
        var lists: [String] = []
        var queries: String?
        var seconds = 2.0
        var threads = 2
        var json = false
    }

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        do {
            let options = try parse(words)
            let report = try measure(options, console: console, clock: clock)
            console.out(options.json ? report.json : report.table)
            return 0
        } catch {
            console.err("phosra-gate bench matcher: \(error)")
            return 1
        }
    }

    private static func parse(_ words: [String]) throws(GatewayError) -> Options {
        var options = Options()
        var index = 0
        func value(_ flag: String) throws(GatewayError) -> String {
            index += 1
            guard index < words.count else { throw .flag(flag, "needs a value") }
            return words[index]
        }
        while index < words.count {
            let word = words[index]
            switch word {
            case "--list": options.lists.append(try value(word))
            case "--queries": options.queries = try value(word)
            case "--seconds":
                guard let seconds = Double(try value(word)), seconds > 0, seconds <= 600 else {
                    throw .flag(word, "a number of seconds from 0 to 600")
                }
                options.seconds = seconds
            case "--threads":
                guard let threads = Int(try value(word)), threads >= 1, threads <= 256 else {
                    throw .flag(word, "a whole number from 1 to 256")
                }
                options.threads = threads
            case "--json": options.json = true
            default: throw .flag(word, "unknown flag\n" + usage)
            }
            index += 1
        }
        guard options.lists.count <= TrieLayout.maxLists else { throw .flag("--list", "at most 16 lists") }
        for path in options.lists + (options.queries.map { [$0] } ?? []) where !Files.exists(path) {
            throw .flag(path == options.queries ? "--queries" : "--list", "\(path): No such file or directory")
        }
        return options
    }

    private static func measure(
        _ options: Options, console: some Console, clock: any Clock
    ) throws(GatewayError)
        -> BenchReport
    {
        let scratch = "/tmp/phosra-gate-bench-\(getpid())"
        defer { _ = try? ChildProcess.run("/bin/rm", ["-rf", scratch]) }
        do { try Files.makeDirectories(scratch) } catch { throw .usage("\(error)") }
        let workload = try BenchWorkload.prepare(options, scratch: scratch)

        // Build and load each in a fresh process: memory figures must not mix.
        let compiled = scratch + "/bench.trie"
        let built = try child(["build", compiled] + workload.listFiles)
        let loaded = try child(["load", compiled, workload.queryFile])
        let trie: LabelTrie
        do { trie = try ListCache.load(compiled) } catch { throw .usage("\(error)") }

        let queries = workload.queries
        // One untimed pass first: the mapping's pages fault in once, not during the timing.
        let hits = lookups(trie, queries, from: 0, count: queries.count)
        let single = Timing.rate(seconds: options.seconds, threads: 1, clock: clock) { offset, budget in
            lookups(trie, queries, from: offset, count: budget)
        }
        let multi = Timing.rate(seconds: options.seconds, threads: options.threads, clock: clock) { offset, budget in
            lookups(trie, queries, from: offset, count: budget)
        }
        let naive = NaiveMatcher(names: workload.listedNames)
        let texts = queries.map(\.description)
        let naiveRate = Timing.rate(seconds: options.seconds, threads: 1, clock: clock) { offset, budget in
            var index = offset % texts.count
            var found = 0
            for _ in 0..<budget {
                if naive.matches(texts[index]) { found += 1 }
                index += 1
                if index == texts.count { index = 0 }
            }
            return found
        }
        let naiveHits = texts.reduce(0) { $0 + (naive.matches($1) ? 1 : 0) }
        if hits != naiveHits { console.err("warning: the trie matched \(hits) queries, the naive set \(naiveHits)") }
        return BenchReport(
            names: trie.nameCount, queries: queries.count, threads: options.threads,
            buildSeconds: built["build_seconds"] ?? 0, loadSeconds: loaded["load_seconds"] ?? 0,
            residentGrowth: Int(loaded["resident_growth"] ?? 0), buildPeak: Int(built["build_peak_bytes"] ?? 0),
            structure: Int(built["structure_bytes"] ?? 0), lookups: single, lookupsThreads: multi,
            naive: naiveRate, hits: hits, source: workload.description)
    }

    /// Runs `lookups` over the queries and returns how many matched.
    @inline(never)
    static func lookups(_ trie: LabelTrie, _ queries: [DomainName], from offset: Int, count: Int) -> Int {
        var depths = MatchDepths()
        let empty = MatchDepths()
        var index = offset % queries.count
        var found = 0
        for _ in 0..<count {
            trie.match(queries[index], into: &depths)
            if depths != empty { found += 1 }
            index += 1
            if index == queries.count { index = 0 }
        }
        return found
    }

    private static func child(_ arguments: [String]) throws(GatewayError) -> [String: Double] {
        guard let executable = Files.executablePath() else { throw .usage("cannot find the running executable") }
        let result: ChildProcess.Result
        do { result = try ChildProcess.run(executable, ["bench", "matcher-child"] + arguments) } catch {
            throw .usage("\(error)")
        }
        guard result.status == 0 else {
            throw .usage("measurement process \(arguments.first ?? "") failed (exit \(result.status))")
        }
        return MatcherChild.parse(result.text)
    }
}

/// Timed loops on one or more threads.
enum Timing {
    /// Lookups per second: `body(offset, count)` runs `count` lookups; batches repeat
    /// until `seconds` have passed on every thread.
    static func rate(
        seconds: Double, threads: Int, clock: any Clock, _ body: @Sendable @escaping (Int, Int) -> Int
    ) -> Double {
        let batch = 20_000
        let totals = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads)
        defer { totals.deallocate() }
        totals.initialize(repeating: 0)
        let start = clock.now()
        nonisolated(unsafe) let shared = totals
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var done = 0
            var offset = thread * 7919
            while clock.seconds(since: start) < seconds {
                _ = body(offset, batch)
                done += batch
                offset += batch
            }
            shared[thread] = done
        }
        let elapsed = clock.seconds(since: start)
        return Double(totals.reduce(0, +)) / elapsed
    }
}
