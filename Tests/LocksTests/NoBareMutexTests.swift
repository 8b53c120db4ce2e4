import Foundation
import Testing

/// A bare `Synchronization.Mutex` would bring back the reports ThreadSanitizer cannot order
/// (docs/ARCHITECTURE.md#threads), in whichever place a run's timing made it contend.
@Suite struct NoBareMutexTests {
    /// The checkout's root: this file is `Tests/LocksTests/NoBareMutexTests.swift`.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `Lock` itself and the benchmark that compares the two may name `Mutex`.
    static let allowed: Set<String> = ["Sources/Locks/Lock.swift", "Tests/Sanitizers/LockCost/main.swift"]

    @Test func everyLockInSourcesAndTestsIsALocksLock() throws {
        var offenders: [String] = []
        var scanned = 0
        for folder in ["Sources", "Tests"] {
            let walker = try #require(
                FileManager.default.enumerator(atPath: Self.root.appendingPathComponent(folder).path))
            while let name = walker.nextObject() as? String {
                let path = folder + "/" + name
                guard path.hasSuffix(".swift"), !Self.allowed.contains(path) else { continue }
                let text = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
                scanned += 1
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where line.contains("Mutex") && line.contains(/\bMutex\s*[<(]/) {
                    offenders.append("\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        #expect(scanned > 100, "found only \(scanned) Swift files under \(Self.root.path)")
        #expect(offenders.isEmpty, "use Locks.Lock instead of Mutex:\n\(offenders.joined(separator: "\n"))")
    }
}
