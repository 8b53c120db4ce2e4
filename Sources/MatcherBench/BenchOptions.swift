/// What `bench matcher` was asked for (docs/benchmarks.md#bench-matcher).
public struct BenchOptions: Sendable {
    public var lists: [String] = []
    public var queries: String?
    public var strategies = Strategy.allCases
    public var sizes: [Int] = []
    public var mixes: [QueryMix] = [.popular]
    /// Queries per mix; nil: each mix's default.
    public var queryCount: Int?
    public var seconds = 1.0
    public var threads = 2
    public var json = false
    public var csv = false
    public var svg: String?

    public init() {}
}

/// Why a benchmark cannot run: a flag's value (the flag and the problem) or anything else.
public enum BenchError: Error, CustomStringConvertible {
    case flag(String, String)
    case usage(String)

    public var description: String {
        switch self {
        case .flag(let flag, let problem): "\(flag): \(problem)"
        case .usage(let text): text
        }
    }
}
