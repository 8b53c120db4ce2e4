import Foundation
import TestSupport

/// How long the soak runs and what it holds the daemon to (docs/benchmarks.md#soak). Read
/// from the environment that `scripts/soak` sets; without `PHOSRA_GATE_SOAK_MINUTES` the
/// soak is skipped, so `swift test` stays short.
struct SoakSettings: Sendable {
    /// The whole load phase, in seconds.
    let duration: Double
    /// Warm-up: the first 20 % of the run, but at least 60 s (caches, the SQLite page cache
    /// and malloc's arenas fill first) and at most half of it. Memory is judged after it.
    let warmUp: Double
    /// The daemon under test: the shipped release build when `scripts/soak` names it,
    /// else the debug build beside the tests.
    let binary: String
    let seed: UInt64

    /// One sample of /proc every 10 s.
    static let sampleInterval = 10.0
    /// Resident memory may grow by at most this share from right after warm-up to the end.
    static let growthLimit = 0.05
    /// Samples averaged at each end of that comparison.
    static let samplesAveraged = 3
    /// The peak resident set (VmHWM) the README promises under this load, in bytes.
    static let peakBound = 64 * 1024 * 1024
    /// Open files the quiet daemon may hold at the end beyond those it held right after
    /// warm-up: a connection to the API or an upstream that happens to be open then.
    static let openFileSlack = 6
    /// Threads are fixed at start; a reload may run one helper thread at a time.
    static let threadSlack = 1

    static let environmentKey = "PHOSRA_GATE_SOAK_MINUTES"
    static var isRequested: Bool { ProcessInfo.processInfo.environment[environmentKey] != nil }

    init(minutes: Double, binary: String, seed: UInt64) {
        duration = minutes * 60
        warmUp = min(max(60, duration * 0.2), duration / 2)
        self.binary = binary
        self.seed = seed
    }

    /// From `PHOSRA_GATE_SOAK_MINUTES` (a positive number), `PHOSRA_GATE_SOAK_BINARY`
    /// (optional) and `PHOSRA_GATE_SOAK_SEED` (optional; the time otherwise).
    static func fromEnvironment() throws -> SoakSettings {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment[environmentKey], let minutes = Double(text), minutes >= 2 else {
            throw SoakError(
                "\(environmentKey) must be at least 2 (minutes): a 60 s warm-up, then six samples to compare")
        }
        let binary = environment["PHOSRA_GATE_SOAK_BINARY"].flatMap { $0.isEmpty ? nil : $0 } ?? GateRun.binary
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw SoakError("no phosra-gate binary at \(binary)")
        }
        let seed = environment["PHOSRA_GATE_SOAK_SEED"].flatMap { UInt64($0) } ?? UInt64(Date().timeIntervalSince1970)
        return SoakSettings(minutes: minutes, binary: binary, seed: seed)
    }
}

struct SoakError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
