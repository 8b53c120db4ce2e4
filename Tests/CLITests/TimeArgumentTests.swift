import TestSupport
import Testing
import Zoneinfo

@testable import Commands
@testable import Gateway

@Suite(.blocking) struct TimeArgumentTests {
    static let berlin = try! ZoneRules.load(named: "Europe/Berlin")
    static let newYork = try! ZoneRules.load(named: "America/New_York")

    @Test func offsetsAndZ() throws {
        let utc = try TimeArgument.parse("2026-03-31T12:00:00Z", zone: Self.berlin)
        #expect(utc == 1_774_958_400)
        #expect(try TimeArgument.parse("2026-03-31T14:00+02:00", zone: .utc) == utc)
        #expect(try TimeArgument.parse("2026-03-31T07:00-0500", zone: .utc) == utc)
        #expect(try TimeArgument.parse("2026-03-31T13:00+01", zone: .utc) == utc)
        #expect(try TimeArgument.parse("2026-03-31 12:00:00.123456z", zone: .utc) == utc)
        #expect(try TimeArgument.parse("2026-03-31", zone: .utc) == utc - 12 * 3600)
    }

    @Test func wallClockInTheZone() throws {
        #expect(try TimeArgument.parse("2026-03-31T14:00", zone: Self.berlin) == 1_774_958_400)
        #expect(
            try TimeArgument.parse("2026-01-15T14:00", zone: Self.berlin)
                == TimeArgument.parse("2026-01-15T13:00Z", zone: .utc))
    }

    @Test func aTimeThatOccursTwiceTakesTheEarlierOffset() throws {
        // 01:30 on 2026-11-01 in New York: first EDT (05:30Z), then EST (06:30Z).
        #expect(
            try TimeArgument.parse("2026-11-01T01:30", zone: Self.newYork)
                == TimeArgument.parse("2026-11-01T05:30Z", zone: .utc))
        // 02:30 on 2026-10-25 in Berlin: CEST (00:30Z) before CET (01:30Z).
        #expect(
            try TimeArgument.parse("2026-10-25T02:30", zone: Self.berlin)
                == TimeArgument.parse("2026-10-25T00:30Z", zone: .utc))
    }

    @Test func aTimeThatDoesNotExistIsAnError() throws {
        #expect(throws: TimeArgument.Failure.self) { try TimeArgument.parse("2026-03-29T02:30", zone: Self.berlin) }
        #expect(throws: TimeArgument.Failure.self) { try TimeArgument.parse("2026-03-08T02:00", zone: Self.newYork) }
        #expect(try TimeArgument.parse("2026-03-29T02:30Z", zone: Self.berlin) > 0)
    }

    @Test(arguments: [
        "", "2026", "2026-3-1", "2026-03-31T", "2026-03-31T1:00", "2026-03-31T12:00:0", "2026-03-31T12:00+2",
        "2026-03-31T12:00+25:00", "2026-03-31T12:00Zjunk", "2026-02-29T10:00", "2026-03-31T24:00",
        "2026-03-31T12:60", "2026-03-31T12:00:00.",
    ])
    func rejects(text: String) {
        #expect(throws: TimeArgument.Failure.self) { try TimeArgument.parse(text, zone: .utc) }
    }
}
