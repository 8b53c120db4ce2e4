import Foundation

/// A wall clock a test sets under the real binary (libfaketime, Debian `faketime`): the
/// daemon reads its offset from a file on every reading, so `set` moves it at once,
/// forward or back, while its monotonic clock runs untouched (timers and deadlines keep
/// real time). Pass `environment` to `GateRun`.
public final class FakeWallClock: @unchecked Sendable {
    // Sendable: `file` is immutable; only the test thread calls `set`.
    public static let library = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
    public static var isInstalled: Bool { FileManager.default.fileExists(atPath: library) }

    public let file: String

    /// The clock reads the real time until it is set or stepped.
    public init(_ scratch: ScratchDirectory) throws {
        file = try scratch.write("faketime-offset", "+0\n")
    }

    /// The clock reads `instant` (unix seconds) now, and advances in real time.
    public convenience init(_ scratch: ScratchDirectory, at instant: Int64) throws {
        try self.init(scratch)
        set(instant)
    }

    /// From now on the daemon's wall clock reads `instant` (to the second), then advances.
    public func set(_ instant: Int64) {
        let offset = instant - Int64(Date().timeIntervalSince1970.rounded())
        step("\(offset >= 0 ? "+" : "")\(offset)")
    }

    /// From now on the wall clock is the real one moved by `offset`, in libfaketime's
    /// words: `+1d`, `-1d`, `+0` (none), `+90` (seconds).
    public func step(_ offset: String) {
        try? "\(offset)\n".write(toFile: file, atomically: true, encoding: .utf8)
    }

    public var environment: [String: String] {
        [
            "LD_PRELOAD": Self.library, "FAKETIME_TIMESTAMP_FILE": file, "FAKETIME_NO_CACHE": "1",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        ]
    }
}
