import Dispatch
import DomainMatch

/// Timed loops over a matcher: lookups per second on one or more threads, and the
/// per-lookup latency distribution, measured in batches so reading the clock does not
/// dominate (docs/benchmarks.md#bench-matcher).
public enum Measure {
    /// Runs every query once; returns how many matched any list.
    public static func hits<M: NameMatcher>(_ matcher: M, _ queries: QueryArena) -> Int {
        lookups(matcher, queries, from: 0, count: queries.count)
    }

    /// `hits` for a matcher of any type (opened, so the loop is still specialised).
    public static func hits(of matcher: any NameMatcher, _ queries: QueryArena) -> Int {
        func run<M: NameMatcher>(_ m: M) -> Int { lookups(m, queries, from: 0, count: queries.count) }
        return run(matcher)
    }

    /// `count` lookups from query `offset` on, around the queries; returns how many
    /// matched. Each name is read in place from the arena, as the daemon reads the name it
    /// parsed: a `DomainName` taken from an array and passed to a matcher in another module
    /// costs a retain and a release of its bytes per lookup (an atomic pair, contended when
    /// two threads read the same names), which is not the matcher's work.
    @inline(never)
    static func lookups<M: NameMatcher>(_ matcher: M, _ queries: QueryArena, from offset: Int, count: Int) -> Int {
        queries.bytes.withUnsafeBytes { bytes in
            queries.ends.withUnsafeBufferPointer { ends in
                queries.labels.withUnsafeBufferPointer { labels in
                    let base = bytes.baseAddress!
                    var depths = MatchDepths()
                    var index = offset % ends.count
                    var start = index == 0 ? 0 : Int(ends[index - 1])
                    var found = 0
                    for _ in 0..<count {
                        let end = Int(ends[index])
                        matcher.match(
                            bytes: UnsafeRawBufferPointer(start: base + start, count: end - start),
                            labelCount: Int(labels[index]), into: &depths)
                        if !depths.isEmpty { found += 1 }
                        index += 1
                        start = end
                        if index == ends.count {
                            index = 0
                            start = 0
                        }
                    }
                    return found
                }
            }
        }
    }

    /// Lookups per second over `seconds` on `threads` threads, each starting elsewhere in
    /// the queries.
    public static func rate<M: NameMatcher>(
        _ matcher: M, _ queries: QueryArena, seconds: Double, threads: Int, now: @escaping @Sendable () -> Double
    ) -> Double {
        let batch = 2_000
        let totals = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads)
        defer { totals.deallocate() }
        totals.initialize(repeating: 0)
        nonisolated(unsafe) let shared = totals
        let start = now()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var done = 0
            var offset = thread * 7919
            while now() - start < seconds {
                _ = lookups(matcher, queries, from: offset, count: batch)
                done += batch
                offset += batch
            }
            shared[thread] = done
        }
        return Double(totals.reduce(0, +)) / (now() - start)
    }

    /// Per-lookup nanoseconds at the median, p99 and p99.9: batches of `batch` lookups
    /// timed one by one, each batch's mean a sample.
    public static func latency<M: NameMatcher>(
        _ matcher: M, _ queries: QueryArena, seconds: Double, batch: Int = 8, now: () -> Double
    ) -> (p50: Double, p99: Double, p999: Double) {
        var samples: [Double] = []
        samples.reserveCapacity(1 << 16)
        let start = now()
        var offset = 0
        while now() - start < seconds || samples.count < 1000 {
            let before = now()
            _ = lookups(matcher, queries, from: offset, count: batch)
            samples.append((now() - before) / Double(batch) * 1e9)
            offset += batch
        }
        samples.sort()
        func at(_ fraction: Double) -> Double { samples[min(samples.count - 1, Int(Double(samples.count) * fraction))] }
        return (at(0.5), at(0.99), at(0.999))
    }
}

extension Measure {
    public struct Figures: Sendable {
        public var hits: Int
        public var single: Double
        public var threads: Double
        public var latency: (p50: Double, p99: Double, p999: Double)
    }

    /// A warm pass (which counts the hits), then the rate on one thread and on `threads`,
    /// then the latencies; each strategy's own type, so the loop is specialised for it.
    public static func all(
        _ matcher: any NameMatcher, _ queries: QueryArena, seconds: Double, threads: Int,
        now: @escaping @Sendable () -> Double
    ) -> Figures {
        func run<M: NameMatcher>(_ m: M) -> Figures {
            let hits = hits(m, queries)
            let single = rate(m, queries, seconds: seconds, threads: 1, now: now)
            let many = rate(m, queries, seconds: seconds, threads: threads, now: now)
            let latency = latency(m, queries, seconds: seconds / 2, now: now)
            return Figures(hits: hits, single: single, threads: many, latency: latency)
        }
        switch matcher {
        case let m as LabelTrie: return run(m)
        case let m as NaiveMatcher: return run(m)
        case let m as HashedSuffixMatcher: return run(m)
        case let m as SortedReversedMatcher: return run(m)
        case let m as SQLiteMatcher: return run(m)
        default: return run(matcher)
        }
    }
}

/// A mix's queries laid end to end in one buffer, as `Measure` reads them: the bytes of
/// each name (`DomainName.bytes`), where each ends, and its label count.
public struct QueryArena: Sendable {
    let bytes: [UInt8]
    let ends: [UInt32]
    let labels: [UInt8]

    public var count: Int { ends.count }

    /// Queries must not be empty.
    public init(_ names: [DomainName]) {
        precondition(!names.isEmpty, "no queries")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(names.reduce(0) { $0 + $1.bytes.count })
        var ends: [UInt32] = []
        ends.reserveCapacity(names.count)
        for name in names {
            bytes.append(contentsOf: name.bytes)
            ends.append(UInt32(bytes.count))
        }
        self.bytes = bytes
        self.ends = ends
        labels = names.map { UInt8(truncatingIfNeeded: $0.labelCount) }
    }
}
