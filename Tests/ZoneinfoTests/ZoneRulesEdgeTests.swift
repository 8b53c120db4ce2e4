import Testing
import Zoneinfo

/// The footer rule far past 2037, walking transitions, and inputs at the edges.
@Suite struct ZoneRulesEdgeTests {
    @Test func footerRuleFarPast2037() throws {
        let berlin = try zone("Europe/Berlin")
        #expect(berlin.resolve(local(2100, 3, 28, 2, 30)) == .skipped)
        #expect(
            berlin.resolve(local(2100, 10, 31, 2, 30))
                == .ambiguous(earlier: utc(2100, 10, 31, 0, 30), later: utc(2100, 10, 31, 1, 30)))
        #expect(berlin.nextTransition(after: utc(2100, 1, 1)) == utc(2100, 3, 28, 1))
        #expect(berlin.nextTransition(after: utc(2100, 3, 28, 1)) == utc(2100, 10, 31, 1))
        // The last table transition (2037-10-25) hands over to the footer seamlessly.
        #expect(berlin.nextTransition(after: utc(2037, 6, 1)) == utc(2037, 10, 25, 1))
        #expect(berlin.nextTransition(after: utc(2037, 10, 25, 1)) == utc(2038, 3, 28, 1))
        #expect(berlin.offset(at: utc(9999, 7, 1)) == 7200)
        let newYork = try zone("America/New_York")
        #expect(newYork.offset(at: utc(2100, 3, 14, 6, 59, 59)) == -18000)
        #expect(newYork.offset(at: utc(2100, 3, 14, 7)) == -14400)
        #expect(
            newYork.resolve(local(2100, 11, 7, 1, 30))
                == .ambiguous(earlier: utc(2100, 11, 7, 5, 30), later: utc(2100, 11, 7, 6, 30)))
    }

    @Test func nextTransitionWalksTheYear() throws {
        let berlin = try zone("Europe/Berlin")
        #expect(berlin.nextTransition(after: utc(2026, 1, 1)) == utc(2026, 3, 29, 1))
        #expect(berlin.nextTransition(after: utc(2026, 3, 29, 0, 59, 59)) == utc(2026, 3, 29, 1))
        #expect(berlin.nextTransition(after: utc(2026, 3, 29, 1)) == utc(2026, 10, 25, 1))
        #expect(berlin.nextTransition(after: utc(2026, 10, 25, 1)) == utc(2027, 3, 28, 1))
        // Before any transition: the first one, 1893's switch from local mean time.
        #expect(berlin.nextTransition(after: Int64.min) == nil)  // more than 50 years away
        #expect(berlin.nextTransition(after: utc(1890, 1, 1)) == -2_422_054_408)
    }

    @Test func extremeInputsDoNotTrap() throws {
        for name in ["Europe/Berlin", "Australia/Sydney", "Europe/Dublin", "Pacific/Apia"] {
            let rules = try zone(name)
            for t in [Int64.min, Int64.min + 1, -1 << 59, 1 << 59, Int64.max - 1, Int64.max] {
                _ = rules.offset(at: t)
                _ = rules.abbreviation(at: t)
                _ = rules.localDateTime(at: t)
                _ = rules.nextTransition(after: t)
            }
            #expect(rules.resolve(local(2_000_000_000, 1, 1)) == .skipped)
            #expect(rules.resolve(local(-2_000_000_000, 1, 1)) == .skipped)
            #expect(rules.resolve(local(1_000_000_000, 7, 1)) != .skipped)
        }
        let berlin = try zone("Europe/Berlin")
        #expect(berlin.offset(at: Int64.min) == 3208)  // local mean time, +0:53:28
        #expect(berlin.localDateTime(at: Int64.max).year > 292_000_000_000)
    }

    @Test func invalidWallTimesAreSkipped() throws {
        let berlin = try zone("Europe/Berlin")
        #expect(berlin.resolve(local(2026, 2, 29, 12)) == .skipped)
        #expect(berlin.resolve(local(2026, 1, 1, 24)) == .skipped)
        #expect(berlin.resolve(local(2026, 13, 1)) == .skipped)
        #expect(berlin.resolve(local(2024, 2, 29, 12)) == .unique(utc(2024, 2, 29, 11)))
    }
}
