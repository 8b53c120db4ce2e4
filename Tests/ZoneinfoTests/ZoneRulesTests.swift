import Testing
import Zoneinfo

/// Exact behaviour of real tzdata zones around their transitions.
@Suite struct ZoneRulesTests {
    @Test func berlinSpringForward() throws {
        let berlin = try zone("Europe/Berlin")
        let change = utc(2026, 3, 29, 1)  // 02:00 CET → 03:00 CEST
        #expect(berlin.offset(at: change - 1) == 3600)
        #expect(berlin.offset(at: change) == 7200)
        #expect(berlin.abbreviation(at: change - 1) == "CET")
        #expect(berlin.abbreviation(at: change) == "CEST")
        #expect(berlin.localDateTime(at: change - 1) == local(2026, 3, 29, 1, 59, 59))
        #expect(berlin.localDateTime(at: change) == local(2026, 3, 29, 3, 0, 0))
        #expect(berlin.resolve(local(2026, 3, 29, 2, 30)) == .skipped)
        #expect(berlin.resolve(local(2026, 3, 29, 2, 0)) == .skipped)
        #expect(berlin.resolve(local(2026, 3, 29, 2, 59, 59)) == .skipped)
        #expect(berlin.resolve(local(2026, 3, 29, 1, 59)) == .unique(utc(2026, 3, 29, 0, 59)))
        #expect(berlin.resolve(local(2026, 3, 29, 1, 59, 59)) == .unique(change - 1))
        #expect(berlin.resolve(local(2026, 3, 29, 3, 0)) == .unique(change))
    }

    @Test func berlinFallBack() throws {
        let berlin = try zone("Europe/Berlin")
        let change = utc(2026, 10, 25, 1)  // 03:00 CEST → 02:00 CET
        #expect(berlin.offset(at: change - 1) == 7200)
        #expect(berlin.offset(at: change) == 3600)
        #expect(
            berlin.resolve(local(2026, 10, 25, 2, 30))
                == .ambiguous(earlier: utc(2026, 10, 25, 0, 30), later: utc(2026, 10, 25, 1, 30)))
        #expect(
            berlin.resolve(local(2026, 10, 25, 2, 0)) == .ambiguous(earlier: utc(2026, 10, 25, 0, 0), later: change))
        #expect(
            berlin.resolve(local(2026, 10, 25, 2, 59, 59))
                == .ambiguous(earlier: change - 1, later: utc(2026, 10, 25, 1, 59, 59)))
        #expect(berlin.resolve(local(2026, 10, 25, 1, 59)) == .unique(utc(2026, 10, 24, 23, 59)))
        #expect(berlin.resolve(local(2026, 10, 25, 1, 59, 59)) == .unique(utc(2026, 10, 24, 23, 59, 59)))
        #expect(berlin.resolve(local(2026, 10, 25, 3, 0)) == .unique(utc(2026, 10, 25, 2)))
        #expect(berlin.resolve(local(2026, 7, 1, 12, 0)) == .unique(utc(2026, 7, 1, 10)))
    }

    @Test func newYork() throws {
        let newYork = try zone("America/New_York")
        #expect(newYork.offset(at: utc(2026, 3, 8, 6, 59, 59)) == -18000)
        #expect(newYork.offset(at: utc(2026, 3, 8, 7)) == -14400)
        #expect(newYork.abbreviation(at: utc(2026, 3, 8, 7)) == "EDT")
        #expect(newYork.resolve(local(2026, 3, 8, 2, 30)) == .skipped)
        #expect(newYork.resolve(local(2026, 3, 8, 1, 59, 59)) == .unique(utc(2026, 3, 8, 6, 59, 59)))
        #expect(newYork.resolve(local(2026, 3, 8, 3, 0)) == .unique(utc(2026, 3, 8, 7)))
        #expect(newYork.offset(at: utc(2026, 11, 1, 5, 59, 59)) == -14400)
        #expect(newYork.offset(at: utc(2026, 11, 1, 6)) == -18000)
        #expect(
            newYork.resolve(local(2026, 11, 1, 1, 30))
                == .ambiguous(earlier: utc(2026, 11, 1, 5, 30), later: utc(2026, 11, 1, 6, 30)))
        #expect(newYork.resolve(local(2026, 11, 1, 0, 59, 59)) == .unique(utc(2026, 11, 1, 4, 59, 59)))
        #expect(newYork.resolve(local(2026, 11, 1, 2, 0)) == .unique(utc(2026, 11, 1, 7)))
    }

    @Test func lordHoweShiftsByHalfAnHour() throws {
        let lordHowe = try zone("Australia/Lord_Howe")
        #expect(lordHowe.offset(at: utc(2026, 7, 1)) == 37800)  // +10:30
        #expect(lordHowe.offset(at: utc(2026, 1, 1)) == 39600)  // +11
        // Ends 2026-04-05 02:00 (+11) → 01:30 (+10:30).
        #expect(
            lordHowe.resolve(local(2026, 4, 5, 1, 45))
                == .ambiguous(earlier: utc(2026, 4, 4, 14, 45), later: utc(2026, 4, 4, 15, 15)))
        #expect(
            lordHowe.resolve(local(2026, 4, 5, 1, 30))
                == .ambiguous(earlier: utc(2026, 4, 4, 14, 30), later: utc(2026, 4, 4, 15)))
        #expect(lordHowe.resolve(local(2026, 4, 5, 1, 29, 59)) == .unique(utc(2026, 4, 4, 14, 29, 59)))
        #expect(lordHowe.resolve(local(2026, 4, 5, 2, 0)) == .unique(utc(2026, 4, 4, 15, 30)))
        // Starts 2026-10-04 02:00 (+10:30) → 02:30 (+11).
        #expect(lordHowe.resolve(local(2026, 10, 4, 2, 0)) == .skipped)
        #expect(lordHowe.resolve(local(2026, 10, 4, 2, 15)) == .skipped)
        #expect(lordHowe.resolve(local(2026, 10, 4, 2, 29, 59)) == .skipped)
        #expect(lordHowe.resolve(local(2026, 10, 4, 1, 59, 59)) == .unique(utc(2026, 10, 3, 15, 29, 59)))
        #expect(lordHowe.resolve(local(2026, 10, 4, 2, 30)) == .unique(utc(2026, 10, 3, 15, 30)))
        #expect(lordHowe.nextTransition(after: utc(2026, 1, 1)) == utc(2026, 4, 4, 15))
        #expect(lordHowe.nextTransition(after: utc(2026, 4, 4, 15)) == utc(2026, 10, 3, 15, 30))
    }

    @Test func sydneyIsSouthern() throws {
        let sydney = try zone("Australia/Sydney")
        #expect(sydney.offset(at: utc(2026, 1, 15)) == 39600)
        #expect(sydney.abbreviation(at: utc(2026, 1, 15)) == "AEDT")
        #expect(sydney.offset(at: utc(2026, 7, 15)) == 36000)
        #expect(sydney.abbreviation(at: utc(2026, 7, 15)) == "AEST")
        #expect(
            sydney.resolve(local(2026, 4, 5, 2, 30))
                == .ambiguous(earlier: utc(2026, 4, 4, 15, 30), later: utc(2026, 4, 4, 16, 30)))
        #expect(sydney.resolve(local(2026, 10, 4, 2, 30)) == .skipped)
        #expect(sydney.resolve(local(2026, 12, 31, 23, 59, 59)) == .unique(utc(2026, 12, 31, 12, 59, 59)))
        #expect(sydney.localDateTime(at: utc(2026, 12, 31, 13)) == local(2027, 1, 1))
        // Past the table (2037) the footer's year-spanning daylight time takes over.
        #expect(sydney.offset(at: utc(2100, 1, 1)) == 39600)
        #expect(sydney.offset(at: utc(2100, 6, 1)) == 36000)
    }

    /// tzdata models Irish summer time as standard (IST, +1) and winter as a negative
    /// daylight saving (GMT, 0), in the table and in the footer `IST-1GMT0,M10.5.0,M3.5.0/1`.
    @Test func dublinHasNegativeDaylightSaving() throws {
        let dublin = try zone("Europe/Dublin")
        for year in [2026, 2100] {
            #expect(dublin.offset(at: utc(year, 1, 15)) == 0)
            #expect(dublin.abbreviation(at: utc(year, 1, 15)) == "GMT")
            #expect(dublin.isDaylightSavingTime(at: utc(year, 1, 15)))
            #expect(dublin.offset(at: utc(year, 7, 15)) == 3600)
            #expect(dublin.abbreviation(at: utc(year, 7, 15)) == "IST")
            #expect(!dublin.isDaylightSavingTime(at: utc(year, 7, 15)))
        }
        #expect(dublin.resolve(local(2026, 3, 29, 1, 30)) == .skipped)
        #expect(
            dublin.resolve(local(2026, 10, 25, 1, 30))
                == .ambiguous(earlier: utc(2026, 10, 25, 0, 30), later: utc(2026, 10, 25, 1, 30)))
        #expect(dublin.nextTransition(after: utc(2026, 1, 1)) == utc(2026, 3, 29, 1))
        #expect(dublin.nextTransition(after: utc(2026, 3, 29, 1)) == utc(2026, 10, 25, 1))
    }

    @Test func apiaSkippedAWholeDay() throws {
        let apia = try zone("Pacific/Apia")
        let change: Int64 = 1_325_239_200  // 2011-12-30T10:00Z
        #expect(apia.localDateTime(at: change - 1) == local(2011, 12, 29, 23, 59, 59))
        #expect(apia.localDateTime(at: change) == local(2011, 12, 31, 0, 0, 0))
        for hour in 0..<24 {
            for minute in stride(from: 0, to: 60, by: 15) {
                #expect(apia.resolve(local(2011, 12, 30, hour, minute)) == .skipped)
            }
        }
        #expect(apia.resolve(local(2011, 12, 30, 23, 59, 59)) == .skipped)
        #expect(apia.resolve(local(2011, 12, 29, 23, 59, 59)) == .unique(change - 1))
        #expect(apia.resolve(local(2011, 12, 31)) == .unique(change))
        #expect(apia.nextTransition(after: utc(2011, 12, 1)) == change)
        // Apia dropped daylight time in 2021; the footer is `<+13>-13`.
        #expect(apia.offset(at: utc(2026, 1, 1)) == 46800)
        #expect(apia.nextTransition(after: utc(2026, 1, 1)) == nil)
    }

    @Test func kolkataHasNoDaylightTime() throws {
        let kolkata = try zone("Asia/Kolkata")
        for t in [utc(1970, 1, 1), utc(2026, 1, 1), utc(2026, 7, 1), utc(2100, 7, 1), utc(2500, 1, 1)] {
            #expect(kolkata.offset(at: t) == 19800)
            #expect(kolkata.abbreviation(at: t) == "IST")
        }
        #expect(kolkata.localDateTime(at: utc(2026, 3, 29, 18, 30)) == local(2026, 3, 30))
        #expect(kolkata.resolve(local(2026, 6, 1, 12)) == .unique(utc(2026, 6, 1, 6, 30)))
        #expect(kolkata.nextTransition(after: utc(2026, 1, 1)) == nil)
        #expect(kolkata.nextTransition(after: utc(1900, 1, 1)) == utc(1905, 12, 31, 18, 38, 50))
    }

    @Test func coordinatedUniversalTime() throws {
        let loaded = try zone("UTC")
        for rules in [loaded, ZoneRules.utc] {
            for t: Int64 in [0, -86_400 * 365 * 100, 1_774_746_000, 4_102_444_800] {
                #expect(rules.offset(at: t) == 0)
                #expect(rules.abbreviation(at: t) == "UTC")
                #expect(rules.resolve(rules.localDateTime(at: t)) == .unique(t))
            }
            #expect(rules.localDateTime(at: 0) == local(1970, 1, 1))
            #expect(rules.localDateTime(at: -1) == local(1969, 12, 31, 23, 59, 59))
            #expect(rules.localDateTime(at: -86_401) == local(1969, 12, 30, 23, 59, 59))
            #expect(rules.nextTransition(after: 0) == nil)
        }
        #expect(loaded.name == "UTC")
        #expect(ZoneRules.utc.name == "UTC")
    }
}
