import Blocklists
import Config
import DomainMatch
import EventLoop
import Gateway
import Glibc
import MatcherBench
import SystemIO

/// `phosra-gate bench matcher`: the matcher strategies side by side on list sizes and query
/// mixes (docs/benchmarks.md#bench-matcher), as a table, JSON, CSV or an SVG chart.
enum BenchMatcherCommand: Command {
    static let name = "matcher"
    static let summary = "the matcher's speed and memory beside reference strategies"
    static let usage = """
        usage: phosra-gate bench matcher [--list FILE]... [--queries FILE] [--strategy NAME,...] [--sizes N,...]
                                         [--mix NAME,...] [--query-count N] [--seconds N] [--threads N]
                                         [--json | --csv] [--svg FILE]
        """

    typealias Options = BenchOptions

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        do {
            let options = try parse(words)
            let (machine, results) = try measure(options, console: console, clock: clock)
            if let svg = options.svg {
                do { try Files.writeAtomically(svg, Array(BenchChart.svg(machine, results).utf8)) } catch {
                    throw GatewayError.flag("--svg", "\(error)")
                }
            }
            console.out(
                options.json
                    ? BenchOutput.json(machine, results)
                    : options.csv ? BenchOutput.csv(results) : BenchOutput.table(machine, results))
            return 0
        } catch {
            console.err("phosra-gate bench matcher: \(error)")
            return 1
        }
    }

    /// `10k`, `1m`, `5M`, `2500`.
    static func size(_ text: Substring) -> Int? {
        let lower = text.lowercased()
        var scale = 1
        var digits = Substring(lower)
        if lower.hasSuffix("k") {
            scale = 1000
            digits = digits.dropLast()
        } else if lower.hasSuffix("m") {
            scale = 1_000_000
            digits = digits.dropLast()
        }
        guard let value = Int(digits), value > 0, value <= 100_000_000 / scale else { return nil }
        return value * scale
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
            case "--strategy":
                guard let strategies = Strategy.parseList(try value(word)) else {
                    throw .flag(word, "names from \(Strategy.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                options.strategies = strategies
            case "--sizes":
                let sizes = try value(word).split(separator: ",").map(size)
                guard !sizes.isEmpty, !sizes.contains(nil) else { throw .flag(word, "sizes such as 10k,100k,1m") }
                options.sizes = sizes.compactMap { $0 }
            case "--mix":
                let mixes = try value(word).split(separator: ",").map { QueryMix(rawValue: String($0)) }
                guard !mixes.isEmpty, !mixes.contains(nil) else {
                    throw .flag(word, "names from \(QueryMix.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                options.mixes = mixes.compactMap { $0 }
            case "--query-count":
                guard let count = Int(try value(word)), count >= 100, count <= 10_000_000 else {
                    throw .flag(word, "a whole number from 100 to 10000000")
                }
                options.queryCount = count
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
            case "--csv": options.csv = true
            case "--svg": options.svg = try value(word)
            default: throw .flag(word, "unknown flag\n" + usage)
            }
            index += 1
        }
        guard !(options.json && options.csv) else { throw .flag("--csv", "one of --json and --csv") }
        guard options.lists.count <= TrieLayout.maxLists else { throw .flag("--list", "at most 16 lists") }
        for path in options.lists + (options.queries.map { [$0] } ?? []) where !Files.exists(path) {
            throw .flag(path == options.queries ? "--queries" : "--list", "\(path): No such file or directory")
        }
        return options
    }

    private static func measure(
        _ options: Options, console: some Console, clock: any Clock
    ) throws(GatewayError) -> (BenchMachine, [BenchResult]) {
        let scratch = "/tmp/phosra-gate-bench-\(getpid())"
        defer { _ = try? ChildProcess.run("/bin/rm", ["-rf", scratch]) }
        do { try Files.makeDirectories(scratch) } catch { throw .usage("\(error)") }
        let workload: BenchWorkload
        do { workload = try BenchWorkload.prepare(options, scratch: scratch) } catch { throw GatewayError(error) }
        let sizes = options.sizes.isEmpty ? [workload.listed.count] : options.sizes
        var machine = BenchMachine(
            cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), threads: options.threads, seconds: options.seconds,
            lists: workload.listSources, queries: workload.querySource, seed: BenchWorkload.seed, synthetic: [:])
        let now: @Sendable () -> Double = { [clock] in clock.seconds(since: 0) }
        var results: [BenchResult] = []
        for size in sizes {
            let (lists, synthetic) = workload.subset(size)
            machine.synthetic[size] = synthetic
            let flat = lists.flatMap { $0 }
            let files: [String]
            do { files = try BenchWorkload.write(lists, prefix: "\(scratch)/size\(size)") } catch {
                throw GatewayError(error)
            }
            let mixes = options.mixes.map {
                ($0, $0.queries(listed: flat, popular: workload.popular, count: options.queryCount))
            }
            let arenas = mixes.map { QueryArena($0.1) }
            let queryFile = "\(scratch)/queries\(size).txt"
            do {
                try Files.writeAtomically(queryFile, Array(mixes[0].1.map(\.description).joined(separator: "\n").utf8))
            } catch { throw .usage("\(error)") }
            // Every strategy is built and loaded first (each in a child, for its time and
            // memory), then all are measured in turns on each mix.
            var prepared:
                [(strategy: Strategy, matcher: any NameMatcher, built: [String: Double], loaded: [String: Double])] = []
            for strategy in options.strategies {
                console.err("bench matcher: \(strategy.rawValue), \(size) names")
                let file = "\(scratch)/size\(size).\(strategy.rawValue)"
                let built = try child(["build", strategy.rawValue, file] + files)
                let loaded = try child(["load", strategy.rawValue, file, queryFile] + files)
                let matcher =
                    strategy.hasFile
                    ? try MatcherChild.open(strategy, file, listCount: lists.count) : strategy.buildInMemory(lists)!
                prepared.append((strategy, matcher, built, loaded))
            }
            for ((mix, queries), arena) in zip(mixes, arenas) {
                console.err("bench matcher: \(mix.rawValue) queries, \(size) names, strategies in turns")
                let measured = Measure.inTurns(
                    prepared.map(\.matcher), arena, seconds: options.seconds, threads: options.threads, now: now)
                for (entry, figures) in zip(prepared, measured) {
                    results.append(
                        BenchResult(
                            strategy: entry.strategy.rawValue, names: flat.count, mix: mix.rawValue,
                            queries: queries.count, lookupsPerSecond: figures.single,
                            lookupsPerSecondThreads: figures.threads, p50: figures.latency.p50,
                            p99: figures.latency.p99, p999: figures.latency.p999,
                            bytesPerName: Double(entry.loaded["resident_growth"] ?? 0) / Double(max(1, flat.count)),
                            buildSeconds: entry.built["build_seconds"] ?? .nan,
                            loadSeconds: entry.loaded["load_seconds"], hits: figures.hits))
                }
            }
            prepared.removeAll()
            // After the matchers: SQLite opens the file again for each thread that asks.
            for strategy in options.strategies { _ = unlink("\(scratch)/size\(size).\(strategy.rawValue)") }
            for strategy in options.strategies.dropFirst() {
                for (mix, _) in mixes {
                    let hits = { (name: String) in
                        results.first { $0.strategy == name && $0.names == flat.count && $0.mix == mix.rawValue }?.hits
                    }
                    if hits(strategy.rawValue) != hits(options.strategies[0].rawValue) {
                        console.err(
                            "warning: \(strategy.rawValue) matched \(hits(strategy.rawValue) ?? 0) \(mix.rawValue) "
                                + "queries, \(options.strategies[0].rawValue) \(hits(options.strategies[0].rawValue) ?? 0)"
                        )
                    }
                }
            }
        }
        return (machine, results)
    }

    private static func child(_ arguments: [String]) throws(GatewayError) -> [String: Double] {
        guard let executable = Files.executablePath() else { throw .usage("cannot find the running executable") }
        let result: ChildProcess.Result
        do { result = try ChildProcess.run(executable, ["bench", "matcher-child"] + arguments) } catch {
            throw .usage("\(error)")
        }
        guard result.status == 0 else {
            throw .usage(
                "measurement process \(arguments.prefix(2).joined(separator: " ")) failed (exit \(result.status))")
        }
        return MatcherChild.parse(result.text)
    }
}

extension GatewayError {
    /// A benchmark's error, said as the gateway's other commands say theirs.
    init(_ error: BenchError) {
        switch error {
        case .flag(let flag, let problem): self = .flag(flag, problem)
        case .usage(let text): self = .usage(text)
        }
    }
}
