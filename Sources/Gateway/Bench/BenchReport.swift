/// The figures of one `bench matcher` run, as a table or as the JSON object of the issue.
struct BenchReport {
    let names: Int
    let queries: Int
    let threads: Int
    let buildSeconds: Double
    let loadSeconds: Double
    let residentGrowth: Int
    let buildPeak: Int
    let structure: Int
    let lookups: Double
    let lookupsThreads: Double
    let naive: Double
    let hits: Int
    let source: String

    var bytesPerName: Double { names > 0 ? Double(residentGrowth) / Double(names) : 0 }
    var speedup: Double { naive > 0 ? lookups / naive : 0 }

    var json: String {
        func number(_ value: Double) -> String { value.isFinite ? "\(value)" : "null" }
        return "{"
            + [
                "\"names\":\(names)",
                "\"build_seconds\":\(number(buildSeconds))",
                "\"load_seconds\":\(number(loadSeconds))",
                "\"bytes_per_name\":\(number(bytesPerName))",
                "\"build_peak_bytes\":\(buildPeak)",
                "\"structure_bytes\":\(structure)",
                "\"lookups_per_second\":\(number(lookups))",
                "\"lookups_per_second_threads\":\(number(lookupsThreads))",
                "\"naive_lookups_per_second\":\(number(naive))",
                "\"speedup_vs_naive\":\(number(speedup))",
                "\"hits\":\(hits)",
            ].joined(separator: ",") + "}"
    }

    var table: String {
        func fixed(_ value: Double, _ digits: Int) -> String {
            var scale = 1.0
            for _ in 0..<digits { scale *= 10 }
            let rounded = (value * scale).rounded() / scale
            return "\(rounded)"
        }
        func millions(_ rate: Double) -> String { fixed(rate / 1e6, 2) + " M/s" }
        let peakRatio = structure > 0 ? Double(buildPeak) / Double(structure) : 0
        return """
            bench matcher: \(names) names (\(source)); \(queries) queries, \(hits) matched
              build from text        \(fixed(buildSeconds, 3)) s            target ≤ 2 s
              load compiled file     \(fixed(loadSeconds * 1000, 2)) ms          target ≤ 50 ms
              resident per name      \(fixed(bytesPerName, 1)) bytes        target ≤ 40
              build peak             \(buildPeak >> 20) MiB (\(fixed(peakRatio, 2))× the \(structure >> 20) MiB structure)   target ≤ 3×
              lookups, 1 thread      \(millions(lookups))       target ≥ 5 M/s
              lookups, \(threads) threads     \(millions(lookupsThreads))
              naive Set<String>      \(millions(naive))       speedup \(fixed(speedup, 2))×   target ≥ 4×
            """
    }
}
