import Foundation
import TestSupport
import Testing
import Zoneinfo

/// Tests read zoneinfo from here explicitly, never via $TZ, $TZDIR or /etc/localtime.
let zoneinfoDirectory = "/usr/share/zoneinfo"

func zone(_ name: String) throws -> ZoneRules {
    try ZoneRules.load(named: name, directory: zoneinfoDirectory)
}

/// Unix seconds of a UTC wall time; `CivilCalendar` is itself checked against
/// independent day-by-day counting in CivilCalendarTests.
func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Int64 {
    Int64(CivilCalendar.days(year: year, month: month, day: day)) * 86_400
        + Int64(hour * 3600 + minute * 60 + second)
}

func local(
    _ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0
) -> LocalDateTime {
    LocalDateTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
}

struct MissingFile: Error { let path: String }

/// Reads a whole file with Foundation (tests only; the module has its own reader).
func fileBytes(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else { throw MissingFile(path: path) }
    return [UInt8](data)
}

/// Whether `resolution` contains the instant `t`.
func contains(_ resolution: LocalResolution, _ t: Int64) -> Bool {
    switch resolution {
    case .unique(let u): return u == t
    case .ambiguous(let a, let b): return a == t || b == t
    case .skipped: return false
    }
}

/// True when `error` is `.malformed` (whatever the reason).
func isMalformed(_ error: ZoneError) -> Bool {
    if case .malformed = error { return true }
    return false
}

/// Builds TZif files field by field, so tests can state exactly what is wrong.
struct TZifBuilder {
    struct TimeType {
        var offset: Int32
        var isDST: UInt8 = 0
        var designation: UInt8 = 0
    }
    var version: UInt8 = UInt8(ascii: "2")
    var transitions: [Int64] = []
    var indices: [UInt8] = []
    var types: [TimeType] = [TimeType(offset: 0)]
    var characters: [UInt8] = Array("UTC\0".utf8)
    var leapRecords: [(Int64, Int32)] = []
    var footer: [UInt8]? = Array("\nUTC0\n".utf8)
    /// Overrides for the six header counts of the 64-bit (or only) block.
    var counts: [Int: UInt32] = [:]

    func bytes() -> [UInt8] {
        var out = block(timeSize: 4, header: version)
        if version != 0 {
            out += block(timeSize: 8, header: version)
            out += footer ?? []
        }
        return out
    }

    private func block(timeSize: Int, header version: UInt8) -> [UInt8] {
        var out = Array("TZif".utf8) + [version] + [UInt8](repeating: 0, count: 15)
        let natural: [UInt32] = [
            0, 0, UInt32(leapRecords.count), UInt32(transitions.count),
            UInt32(types.count), UInt32(characters.count),
        ]
        for (i, n) in natural.enumerated() { out += be(UInt64(counts[i] ?? n), 4) }
        for t in transitions { out += be(UInt64(bitPattern: t), timeSize) }
        out += indices
        for t in types { out += be(UInt64(UInt32(bitPattern: t.offset)), 4) + [t.isDST, t.designation] }
        out += characters
        for (t, c) in leapRecords { out += be(UInt64(bitPattern: t), timeSize) + be(UInt64(UInt32(bitPattern: c)), 4) }
        return out
    }

    private func be(_ value: UInt64, _ size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}

typealias SplitMix = SeededGenerator
