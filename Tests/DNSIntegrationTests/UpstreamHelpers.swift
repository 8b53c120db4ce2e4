import Foundation
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

    /// `run` with `policy` (a CompiledPolicy document), `--upstream upstream` and `extra` flags.
    func start(_ policy: String, upstream: String, _ extra: [String] = []) throws -> GateRun {
        let path = try scratch.write("policy-\(UUID().uuidString).json", policy)
        return try GateRun(["--policy", path, "--lists", lists, "--upstream", upstream] + extra, scratch: scratch)
    }
}

/// `body`'s result and how long it took, in seconds.
func timed<T>(_ body: () throws -> T) rethrows -> (T, TimeInterval) {
    let start = Date()
    let result = try body()
    return (result, Date().timeIntervalSince(start))
}

func sleep(seconds: TimeInterval) { usleep(UInt32(seconds * 1_000_000)) }

/// A downtime window on every day from `start` to `end` minutes from the current UTC
/// minute (the daemons run with `--timezone UTC`).
func downtimeWindow(fromMinute start: Int, toMinute end: Int) -> String {
    let now = Int(Date().timeIntervalSince1970) / 60 % 1440
    func hhmm(_ minute: Int) -> String {
        let wrapped = ((now + minute) % 1440 + 1440) % 1440
        return String(format: "%02d:%02d", wrapped / 60, wrapped % 60)
    }
    return #""downtime_windows": [{"start_time": "\#(hhmm(start))", "end_time": "\#(hhmm(end))"}]"#
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
