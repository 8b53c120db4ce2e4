import Foundation
import TestSupport
import Testing
import Zoneinfo

/// Compares with glibc, through GNU `date`: 2,000 pseudo-random instants from 1970 to
/// 2100 and 500 from 1850 to 1970 per zone, and both sides of every offset change
/// `nextTransition` reports from 1850 to 2100.
@Suite struct GNUDateTests {
    static let zones = [
        "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Europe/Dublin",
        "Pacific/Apia", "Asia/Kolkata", "America/Santiago", "America/Nuuk", "Asia/Gaza",
    ]
    static let early = utc(1850, 1, 1)
    static let start = utc(1970, 1, 1)
    static let end = utc(2100, 1, 1)

    @Test(arguments: zones)
    func agreesWithGNUDate(name: String) throws {
        let rules = try zone(name)
        var random = SplitMix(seed: UInt64(truncatingIfNeeded: name.utf8.reduce(7) { $0 &* 31 &+ Int($1) }))
        let samples =
            (0..<2_000).map { _ in Self.start + Int64(random.next() % UInt64(Self.end - Self.start)) }
            + (0..<500).map { _ in Self.early + Int64(random.next() % UInt64(Self.start - Self.early)) }

        var changes: [Int64] = []
        var cursor = Self.early
        while cursor < Self.end {
            guard let next = rules.nextTransition(after: cursor) else {
                cursor += 50 * 365 * 86_400  // nil promises no change for 50 years
                continue
            }
            if next >= Self.end { break }
            #expect(rules.offset(at: next - 1) != rules.offset(at: next))
            changes.append(next)
            cursor = next
        }
        let instants = samples + changes.flatMap { [$0 - 1, $0] }
        let expected = try gnuDate(zone: name, instants: instants)
        try #require(expected.count == instants.count)
        for (t, line) in zip(instants, expected) {
            let wall = rules.localDateTime(at: t)
            let sign = rules.offset(at: t) < 0 ? "-" : "+"
            let magnitude = Int(rules.offset(at: t).magnitude)
            let zoneField = sign + twoDigits(magnitude / 3600) + twoDigits(magnitude / 60 % 60)
            #expect("\(wall) \(zoneField) \(rules.abbreviation(at: t))" == line, "@\(t) in \(name)")
            #expect(contains(rules.resolve(wall), t), "round trip of @\(t) in \(name)")
        }

        // No change is missed: between reported changes the offset stays put.
        for t in samples {
            let lastChange = changes.last { $0 <= t } ?? Self.early
            #expect(rules.offset(at: t) == rules.offset(at: lastChange), "@\(t) in \(name)")
        }
    }

    private func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// Runs `date -f` once over all instants: one "@N" line in, one line out each.
    private func gnuDate(zone: String, instants: [Int64]) throws -> [String] {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("instants-\(UUID().uuidString)")
        try instants.map { "@\($0)\n" }.joined().write(to: input, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: input) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["date", "-f", input.path, "+%Y-%m-%dT%H:%M:%S %z %Z"]
        process.environment = [
            "TZ": ":" + zone, "TZDIR": zoneinfoDirectory, "LC_ALL": "C",
            "PATH": "/usr/bin:/bin",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
