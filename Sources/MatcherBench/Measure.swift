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

    /// Lookups per second over `seconds` on `threads` threads, thread `t` starting at
    /// query `offset + t × 7919`.
    public static func rate<M: NameMatcher>(
        _ matcher: M, _ queries: QueryArena, seconds: Double, threads: Int, offset: Int = 0,
        now: @escaping @Sendable () -> Double
    ) -> Double {
        let batch = 2_000
        let totals = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads)
        defer { totals.deallocate() }
        totals.initialize(repeating: 0)
        nonisolated(unsafe) let shared = totals
        let start = now()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var done = 0
            var offset = offset + thread * 7919
            while now() - start < seconds {
                _ = lookups(matcher, queries, from: offset, count: batch)
                done += batch
                offset += batch
            }
            shared[thread] = done
        }
        return Double(totals.reduce(0, +)) / (now() - start)
    }

    /// Per-lookup nanoseconds over `seconds`, from query `offset` on: batches of `batch`
    /// lookups timed one by one, each batch's mean a sample (at least 1,000 samples).
    public static func latencySamples<M: NameMatcher>(
        _ matcher: M, _ queries: QueryArena, seconds: Double, offset: Int = 0, batch: Int = 8, now: () -> Double
    ) -> [Double] {
        var samples: [Double] = []
        samples.reserveCapacity(1 << 16)
        let start = now()
        var offset = offset
        while now() - start < seconds || samples.count < 1000 {
            let before = now()
            _ = lookups(matcher, queries, from: offset, count: batch)
            samples.append((now() - before) / Double(batch) * 1e9)
            offset += batch
        }
        return samples
    }

    /// The median, p99 and p99.9 of latency samples.
    public static func percentiles(_ samples: [Double]) -> (p50: Double, p99: Double, p999: Double) {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return (.nan, .nan, .nan) }
        func at(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] }
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

    /// The figures of several matchers on the same queries, measured in turns: `rounds`
    /// rounds, each giving every matcher a turn of `seconds / rounds` on one thread, as
    /// much on `threads`, and half as much taking latency samples. A rate is the median of
    /// its turns, the percentiles are those of all its samples. Taken one after another,
    /// two strategies' rates were minutes apart, and a host that slowed between them moved
    /// their ratio by half; in turns, both see the same host.
    ///
    /// Each matcher first runs every query once, which counts its hits and warms it.
    public static func inTurns(
        _ matchers: [any NameMatcher], _ queries: QueryArena, seconds: Double, threads: Int, rounds: Int = 5,
        now: @escaping @Sendable () -> Double
    ) -> [Figures] {
        let slice = seconds / Double(max(1, rounds))
        let found = matchers.map { hits(of: $0, queries) }
        var turns = [[Turn]](repeating: [], count: matchers.count)
        for round in 0..<max(1, rounds) {
            // Each round starts elsewhere in the queries, so a slow strategy's short turns
            // do not all read the same first names.
            let offset = round * 104_729
            for (index, matcher) in matchers.enumerated() {
                func run<M: NameMatcher>(_ m: M) -> Turn {
                    Turn(
                        single: rate(m, queries, seconds: slice, threads: 1, offset: offset, now: now),
                        threads: rate(m, queries, seconds: slice, threads: threads, offset: offset, now: now),
                        samples: latencySamples(m, queries, seconds: slice / 2, offset: offset, now: now))
                }
                // Each strategy's own type, so the loops are specialised for it.
                switch matcher {
                case let m as LabelTrie: turns[index].append(run(m))
                case let m as NaiveMatcher: turns[index].append(run(m))
                case let m as HashedSuffixMatcher: turns[index].append(run(m))
                case let m as SortedReversedMatcher: turns[index].append(run(m))
                case let m as SQLiteMatcher: turns[index].append(run(m))
                default: turns[index].append(run(matcher))
                }
            }
        }
        return matchers.indices.map { index in
            Figures(
                hits: found[index], single: median(turns[index].map(\.single)),
                threads: median(turns[index].map(\.threads)), latency: percentiles(turns[index].flatMap(\.samples)))
        }
    }

    struct Turn {
        var single: Double
        var threads: Double
        var samples: [Double]
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
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
