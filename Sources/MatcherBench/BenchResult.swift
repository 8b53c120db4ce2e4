import SystemIO

/// One strategy on one list size and one query mix.
public struct BenchResult: Sendable {
    public var strategy: String
    public var names: Int
    public var mix: String
    public var queries: Int
    public var lookupsPerSecond: Double
    public var lookupsPerSecondThreads: Double
    public var p50: Double
    public var p99: Double
    public var p999: Double
    public var bytesPerName: Double
    public var buildSeconds: Double
    /// Time to the first answer from the strategy's file; nil for strategies built in memory.
    public var loadSeconds: Double?
    public var hits: Int

    public init(
        strategy: String, names: Int, mix: String, queries: Int, lookupsPerSecond: Double,
        lookupsPerSecondThreads: Double, p50: Double, p99: Double, p999: Double, bytesPerName: Double,
        buildSeconds: Double, loadSeconds: Double?, hits: Int
    ) {
        self.strategy = strategy
        self.names = names
        self.mix = mix
        self.queries = queries
        self.lookupsPerSecond = lookupsPerSecond
        self.lookupsPerSecondThreads = lookupsPerSecondThreads
        self.p50 = p50
        self.p99 = p99
        self.p999 = p999
        self.bytesPerName = bytesPerName
        self.buildSeconds = buildSeconds
        self.loadSeconds = loadSeconds
        self.hits = hits
    }
}

/// What the run was: machine and inputs, for the JSON document and the chart's caption.
public struct BenchMachine: Sendable {
    public var cores: Int
    public var threads: Int
    public var seconds: Double
    public var lists: [String]
    public var queries: String
    public var seed: UInt64
    /// Per size: how many names were synthetic, beyond the lists (0 when none).
    public var synthetic: [Int: Int]

    public init(
        cores: Int, threads: Int, seconds: Double, lists: [String], queries: String, seed: UInt64,
        synthetic: [Int: Int]
    ) {
        self.cores = cores
        self.threads = threads
        self.seconds = seconds
        self.lists = lists
        self.queries = queries
        self.seed = seed
        self.synthetic = synthetic
    }
}

/// The report of a run: a table, one JSON document, CSV.
public enum BenchOutput {
    static func number(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "null" }
        return "\(value)"
    }

    public static func json(_ machine: BenchMachine, _ results: [BenchResult]) -> String {
        let synthetic = machine.synthetic.keys.sorted().map { "\"\($0)\":\(machine.synthetic[$0]!)" }
        let head = [
            "\"cores\":\(machine.cores)", "\"threads\":\(machine.threads)", "\"seconds\":\(number(machine.seconds))",
            "\"lists\":[\(machine.lists.map { Logger.json($0) }.joined(separator: ","))]",
            "\"queries\":\(Logger.json(machine.queries))", "\"seed\":\(machine.seed)",
            "\"synthetic_names\":{\(synthetic.joined(separator: ","))}",
        ]
        let rows = results.map { r in
            "{"
                + [
                    "\"strategy\":\(Logger.json(r.strategy))", "\"names\":\(r.names)", "\"mix\":\(Logger.json(r.mix))",
                    "\"queries\":\(r.queries)", "\"lookups_per_second\":\(number(r.lookupsPerSecond))",
                    "\"lookups_per_second_threads\":\(number(r.lookupsPerSecondThreads))",
                    "\"p50_ns\":\(number(r.p50))", "\"p99_ns\":\(number(r.p99))", "\"p999_ns\":\(number(r.p999))",
                    "\"bytes_per_name\":\(number(r.bytesPerName))", "\"build_seconds\":\(number(r.buildSeconds))",
                    "\"load_seconds\":\(number(r.loadSeconds))", "\"hits\":\(r.hits)",
                ].joined(separator: ",") + "}"
        }
        return "{\"machine\":{\(head.joined(separator: ","))},\n\"results\":[\n"
            + rows.joined(separator: ",\n") + "\n]}"
    }

    public static let csvHeader =
        "strategy,names,mix,queries,lookups_per_second,lookups_per_second_threads,p50_ns,p99_ns,p999_ns,"
        + "bytes_per_name,build_seconds,load_seconds,hits"

    public static func csv(_ results: [BenchResult]) -> String {
        func cell(_ value: Double?) -> String { value.map { $0.isFinite ? "\($0)" : "" } ?? "" }
        return
            ([csvHeader]
            + results.map { r in
                [
                    r.strategy, "\(r.names)", r.mix, "\(r.queries)", cell(r.lookupsPerSecond),
                    cell(r.lookupsPerSecondThreads), cell(r.p50), cell(r.p99), cell(r.p999), cell(r.bytesPerName),
                    cell(r.buildSeconds), cell(r.loadSeconds), "\(r.hits)",
                ].joined(separator: ",")
            }).joined(separator: "\n")
    }

    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "-" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        var text = "\(rounded)"
        if digits == 0, text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let gap = String(repeating: " ", count: max(0, width - text.count))
        return left ? text + gap : gap + text
    }

    public static func table(_ machine: BenchMachine, _ results: [BenchResult]) -> String {
        var lines = [
            "bench matcher: \(machine.lists.joined(separator: ", ")); queries \(machine.queries); "
                + "\(machine.threads) threads of \(machine.cores) cores, \(fixed(machine.seconds, 2)) s a measure"
        ]
        for size in machine.synthetic.keys.sorted() where machine.synthetic[size]! > 0 {
            lines.append("  \(size) names: \(machine.synthetic[size]!) synthetic names beyond the lists")
        }
        let header = [
            pad("strategy", 16, left: true), pad("names", 8), pad("mix", 8), pad("M/s", 7),
            pad("M/s \(machine.threads)t", 7), pad("p50 ns", 7), pad("p99 ns", 7), pad("p99.9", 7),
            pad("B/name", 7), pad("build s", 8), pad("load ms", 8), pad("×naive", 7), pad("hits", 7),
        ]
        lines.append(header.joined(separator: " "))
        for r in results {
            let naive = results.first { $0.strategy == "naive" && $0.names == r.names && $0.mix == r.mix }
            let ratio = naive.map { r.lookupsPerSecond / $0.lookupsPerSecond } ?? .nan
            lines.append(
                [
                    pad(r.strategy, 16, left: true), pad("\(r.names)", 8), pad(r.mix, 8),
                    pad(fixed(r.lookupsPerSecond / 1e6, 2), 7), pad(fixed(r.lookupsPerSecondThreads / 1e6, 2), 7),
                    pad(fixed(r.p50, 0), 7), pad(fixed(r.p99, 0), 7), pad(fixed(r.p999, 0), 7),
                    pad(fixed(r.bytesPerName, 1), 7), pad(fixed(r.buildSeconds, 3), 8),
                    pad(r.loadSeconds.map { fixed($0 * 1000, 2) } ?? "-", 8), pad(fixed(ratio, 2), 7),
                    pad("\(r.hits)", 7),
                ].joined(separator: " "))
        }
        return lines.joined(separator: "\n")
    }
}
