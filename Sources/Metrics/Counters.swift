import Locks
import Synchronization

/// A count that only goes up, from any thread: one relaxed atomic add.
public final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    public func add(_ value: Int = 1) { count.add(value, ordering: .relaxed) }

    public var value: Int { count.load(ordering: .relaxed) }
}

/// Counters for the cells of a fixed grid of label values (a query's type × its outcome):
/// the label values are known up front, so counting is one atomic add on an index, no
/// lock and no allocation, and the cardinality is bounded by construction.
public final class CounterGrid: Sendable {
    public let rows: [String]
    public let columns: [String]
    private let cells: [Counter]

    public init(rows: [String], columns: [String]) {
        self.rows = rows
        self.columns = columns
        cells = (0..<(rows.count * columns.count)).map { _ in Counter() }
    }

    /// Adds to the cell (`row`, `column`); indices out of range are ignored.
    public func add(row: Int, column: Int, _ value: Int = 1) {
        guard rows.indices.contains(row), columns.indices.contains(column) else { return }
        cells[row * columns.count + column].add(value)
    }

    public func value(row: Int, column: Int) -> Int { cells[row * columns.count + column].value }
}

/// Counts by label values that are not known up front but are few (a block's reason kind,
/// category and profile): a lock around a dictionary. Past `limit` distinct label sets,
/// new ones count under `other`, so a bug elsewhere cannot grow it without end.
public final class LabeledCounter: Sendable {
    public let labelNames: [String]
    public let limit: Int
    private let counts = Lock<[[String]: Int]>([:])

    public init(labelNames: [String], limit: Int = 1024) {
        self.labelNames = labelNames
        self.limit = limit
    }

    public func add(_ labels: [String], _ value: Int = 1) {
        counts.withLock { counts in
            if counts.count < limit || counts[labels] != nil {
                counts[labels, default: 0] += value
            } else {
                counts[labelNames.map { _ in "other" }, default: 0] += value
            }
        }
    }

    /// Every label set and its count, sorted by labels.
    public var values: [(labels: [String], value: Int)] {
        counts.withLock { $0 }.map { ($0.key, $0.value) }.sorted { $0.labels.lexicographicallyPrecedes($1.labels) }
    }
}

/// Durations in fixed buckets (seconds), counted lock-free: the bucket counts, their sum in
/// nanoseconds, and the total.
public final class Histogram: Sendable {
    /// Upper bounds in seconds, ascending; `+Inf` is implied.
    public let bounds: [Double]
    private let buckets: [Counter]
    private let sumNanoseconds = Counter()
    private let total = Counter()

    /// From 1 ms to 2.5 s: what an upstream DNS answer takes, from a LAN cache to a slow
    /// resolver across the world.
    public static let upstreamBounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    public init(bounds: [Double]) {
        self.bounds = bounds
        buckets = bounds.map { _ in Counter() }
    }

    public func observe(nanoseconds: UInt64) {
        let seconds = Double(nanoseconds) / 1e9
        if let index = bounds.firstIndex(where: { seconds <= $0 }) { buckets[index].add() }
        sumNanoseconds.add(Int(clamping: nanoseconds))
        total.add()
    }

    /// Cumulative counts per bound (as the exposition format wants them), the sum in
    /// seconds and the count.
    public var snapshot: (cumulative: [Int], sumSeconds: Double, count: Int) {
        var running = 0
        let cumulative = buckets.map { bucket in
            running += bucket.value
            return running
        }
        return (cumulative, Double(sumNanoseconds.value) / 1e9, total.value)
    }
}

/// One histogram per label value, made on first use (an upstream resolver: as many as the
/// configuration names).
public final class LabeledHistogram: Sendable {
    public let labelName: String
    public let bounds: [Double]
    private let histograms = Lock<[String: Histogram]>([:])

    public init(labelName: String, bounds: [Double]) {
        self.labelName = labelName
        self.bounds = bounds
    }

    public func histogram(_ label: String) -> Histogram {
        histograms.withLock { histograms in
            if let made = histograms[label] { return made }
            let made = Histogram(bounds: bounds)
            histograms[label] = made
            return made
        }
    }

    public var all: [(label: String, histogram: Histogram)] {
        histograms.withLock { $0 }.map { ($0.key, $0.value) }.sorted { $0.label < $1.label }
    }
}

/// A value that goes up and down (tunnels open), from any thread.
public final class Gauge: Sendable {
    private let current = Atomic<Int>(0)

    public init() {}

    public func add(_ value: Int) { current.add(value, ordering: .relaxed) }

    public var value: Int { current.load(ordering: .relaxed) }
}
