import EventLoop
import Foundation
import SystemIO
import TestSupport

/// A scratch directory with a small category lists folder (adult: `adult.example`), on
/// which the real `phosra-gate run` is started against upstreams the test started.
struct UpstreamFixture {
    let scratch: ScratchDirectory
    var lists: String { scratch.path("lists") }

    init() throws {
        scratch = try ScratchDirectory()
        try scratch.write("lists/adult/list.txt", "adult.example\n")
    }

    /// `run` with `policy` (a CompiledPolicy document), `--upstream upstream` and `extra`
    /// flags; its wall clock starts at `wallClock` when given (the time rules' tests).
    func start(_ policy: String, upstream: String, _ extra: [String] = [], wallClock: String? = nil) throws -> GateRun {
        let path = try scratch.write("policy-\(UUID().uuidString).json", policy)
        return try GateRun(
            ["--policy", path, "--lists", lists, "--upstream", upstream] + extra, scratch: scratch,
            environment: wallClock.map(GateRun.wallClock) ?? [:])
    }
}

/// `body`'s result and how long it took, in seconds (on the monotonic clock).
func timed<T>(_ body: () throws -> T) rethrows -> (T, TimeInterval) {
    let clock = SystemClock()
    let start = clock.now()
    let result = try body()
    return (result, TimeInterval(clock.now() - start) / 1e9)
}

/// 50 ms: how often a wait asks the daemon again with dig (a process per try).
let digInterval: Nanoseconds = 50_000_000

/// Asks `gate` for `name` until `accept` takes the answer (nil after 10 s): for waiting
/// on what the daemon's own clock decides, e.g. a cached TTL counting down.
func waitForAnswer(
    _ gate: GateRun, _ name: String, _ type: String = "A", timeout: Nanoseconds = testTimeout,
    until accept: (DigAnswer) -> Bool
) throws -> DigAnswer? {
    try waitFor(timeout: timeout, interval: digInterval) {
        let answer = try gate.dig(name, type)
        return accept(answer) ? answer : nil
    }
}

/// `waitForAnswer`, with how long the accepted answer's own dig took.
func waitForTimedAnswer(
    _ gate: GateRun, _ name: String, until accept: (DigAnswer) -> Bool
) throws
    -> (DigAnswer, TimeInterval)?
{
    try waitFor(interval: digInterval) { () throws -> (DigAnswer, TimeInterval)? in
        let (answer, seconds) = try timed { try gate.dig(name) }
        return accept(answer) ? (answer, seconds) : nil
    }
}

/// `count` TXT records for `name`, each a distinct 200-character string, as dnsmasq options.
func txtRecords(_ name: String, count: Int) -> [String] {
    (1...count).map { "--txt-record=\(name),\"\(String(format: "%02d", $0))\(String(repeating: "x", count: 198))\"" }
}

/// A count shared with a fake upstream's thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    /// Adds one and returns the new count.
    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
