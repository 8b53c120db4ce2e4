import Testing
import Zoneinfo

/// POSIX TZ strings on their own, as in $TZ or a TZif footer.
@Suite struct PosixTZTests {
    @Test func usEasternWithExplicitRule() throws {
        let eastern = try ZoneRules(posixTZ: "EST5EDT,M3.2.0,M11.1.0")
        #expect(eastern.name == "EST5EDT,M3.2.0,M11.1.0")
        #expect(eastern.offset(at: utc(2026, 3, 8, 6, 59, 59)) == -18000)
        #expect(eastern.offset(at: utc(2026, 3, 8, 7)) == -14400)
        #expect(eastern.abbreviation(at: utc(2026, 3, 8, 6, 59, 59)) == "EST")
        #expect(eastern.abbreviation(at: utc(2026, 3, 8, 7)) == "EDT")
        #expect(eastern.offset(at: utc(2026, 11, 1, 5, 59, 59)) == -14400)
        #expect(eastern.offset(at: utc(2026, 11, 1, 6)) == -18000)
        #expect(eastern.resolve(local(2026, 3, 8, 2, 30)) == .skipped)
        #expect(
            eastern.resolve(local(2026, 11, 1, 1, 30))
                == .ambiguous(earlier: utc(2026, 11, 1, 5, 30), later: utc(2026, 11, 1, 6, 30)))
        #expect(eastern.nextTransition(after: utc(2026, 1, 1)) == utc(2026, 3, 8, 7))
        #expect(eastern.nextTransition(after: utc(2026, 3, 8, 7)) == utc(2026, 11, 1, 6))
        #expect(eastern.nextTransition(after: utc(2026, 11, 1, 6)) == utc(2027, 3, 14, 7))
    }

    @Test func daylightWithoutRuleUsesUSDefault() throws {
        let bare = try ZoneRules(posixTZ: "EST5EDT")
        let explicit = try ZoneRules(posixTZ: "EST5EDT,M3.2.0/2,M11.1.0/2:00:00")
        var t = utc(1990, 1, 1)
        while t < utc(2110, 1, 1) {
            #expect(bare.offset(at: t) == explicit.offset(at: t))
            #expect(bare.nextTransition(after: t) == explicit.nextTransition(after: t))
            t += 86_400 * 13 + 3_607
        }
        #expect(bare.offset(at: utc(2026, 3, 8, 7)) == -14400)
        #expect(bare.offset(at: utc(2026, 3, 8, 6, 59, 59)) == -18000)
    }

    @Test func quotedNamesAndFractionalOffsets() throws {
        let tehranLike = try ZoneRules(posixTZ: "<+0330>-3:30")
        #expect(tehranLike.offset(at: utc(2026, 6, 1)) == 12600)
        #expect(tehranLike.abbreviation(at: utc(2026, 6, 1)) == "+0330")
        #expect(tehranLike.localDateTime(at: 0) == local(1970, 1, 1, 3, 30))
        #expect(tehranLike.nextTransition(after: 0) == nil)
        #expect(tehranLike.resolve(local(2026, 6, 1, 3, 30)) == .unique(utc(2026, 6, 1)))
        #expect(try ZoneRules(posixTZ: "<-03>3").offset(at: 0) == -10800)
        #expect(try ZoneRules(posixTZ: "ABC+5").offset(at: 0) == -18000)
        #expect(try ZoneRules(posixTZ: "LMT-0:17:30").offset(at: 0) == 1050)
        #expect(try ZoneRules(posixTZ: "UTC0").offset(at: 0) == 0)
        let newZealand = try ZoneRules(posixTZ: "NZST-12NZDT-13,M9.5.0,M4.1.0/3")
        #expect(newZealand.offset(at: utc(2026, 1, 1)) == 46800)
        #expect(newZealand.offset(at: utc(2026, 7, 1)) == 43200)
        let lordHowe = try ZoneRules(posixTZ: "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0")
        #expect(lordHowe.resolve(local(2026, 10, 4, 2, 15)) == .skipped)
        #expect(lordHowe.abbreviation(at: utc(2026, 1, 1)) == "+11")
    }

    @Test func southernHemisphereRule() throws {
        let sydney = try ZoneRules(posixTZ: "AEST-10AEDT,M10.1.0,M4.1.0/3")
        #expect(sydney.offset(at: utc(2026, 1, 1)) == 39600)
        #expect(sydney.offset(at: utc(2026, 12, 31, 23)) == 39600)
        #expect(sydney.offset(at: utc(2026, 7, 1)) == 36000)
        #expect(sydney.offset(at: utc(2026, 4, 4, 15, 59, 59)) == 39600)  // 02:59:59 AEDT
        #expect(sydney.offset(at: utc(2026, 4, 4, 16)) == 36000)  // → 02:00 AEST
        #expect(sydney.offset(at: utc(2026, 10, 3, 15, 59, 59)) == 36000)
        #expect(sydney.offset(at: utc(2026, 10, 3, 16)) == 39600)
        #expect(
            sydney.resolve(local(2026, 4, 5, 2, 30))
                == .ambiguous(earlier: utc(2026, 4, 4, 15, 30), later: utc(2026, 4, 4, 16, 30)))
        #expect(sydney.resolve(local(2026, 10, 4, 2, 30)) == .skipped)
        #expect(sydney.nextTransition(after: utc(2026, 4, 4, 16)) == utc(2026, 10, 3, 16))
        #expect(sydney.nextTransition(after: utc(2026, 10, 3, 16)) == utc(2027, 4, 3, 16))
    }

    /// `Jn` never counts 29 February; `n` does (and is zero-based).
    @Test func julianDayForms() throws {
        let julian = try ZoneRules(posixTZ: "AAA0BBB,J60/0,J300/0")
        let zeroBased = try ZoneRules(posixTZ: "AAA0BBB,60/0,300/0")
        let fiftyNine = try ZoneRules(posixTZ: "AAA0BBB,59/0,300/0")
        #expect(julian.nextTransition(after: utc(2026, 1, 1)) == utc(2026, 3, 1))
        #expect(julian.nextTransition(after: utc(2028, 1, 1)) == utc(2028, 3, 1))
        #expect(zeroBased.nextTransition(after: utc(2026, 1, 1)) == utc(2026, 3, 2))
        #expect(zeroBased.nextTransition(after: utc(2028, 1, 1)) == utc(2028, 3, 1))
        #expect(fiftyNine.nextTransition(after: utc(2026, 1, 1)) == utc(2026, 3, 1))
        #expect(fiftyNine.nextTransition(after: utc(2028, 1, 1)) == utc(2028, 2, 29))
        #expect(julian.offset(at: utc(2028, 2, 29, 23, 59, 59)) == 0)
        #expect(julian.offset(at: utc(2028, 3, 1)) == 3600)
        // J300 is 27 October in every year; the end is read on the daylight clock.
        #expect(julian.nextTransition(after: utc(2026, 3, 1)) == utc(2026, 10, 26, 23))
        #expect(julian.nextTransition(after: utc(2028, 3, 1)) == utc(2028, 10, 26, 23))
    }

    /// RFC 8536 §3.3.1: change times may be negative or exceed 24 hours.
    @Test func extendedChangeTimes() throws {
        let nuuk = try ZoneRules(posixTZ: "<-02>2<-01>,M3.5.0/-1,M10.5.0/0")
        // Last Sunday of March at -1:00, i.e. Saturday 23:00 local (-02).
        #expect(nuuk.nextTransition(after: utc(2026, 1, 1)) == utc(2026, 3, 29, 1))
        #expect(nuuk.localDateTime(at: utc(2026, 3, 29, 0, 59, 59)) == local(2026, 3, 28, 22, 59, 59))
        #expect(nuuk.localDateTime(at: utc(2026, 3, 29, 1)) == local(2026, 3, 29, 0, 0))
        #expect(nuuk.resolve(local(2026, 3, 28, 23, 30)) == .skipped)
        #expect(
            nuuk.resolve(local(2026, 10, 24, 23, 30))
                == .ambiguous(earlier: utc(2026, 10, 25, 0, 30), later: utc(2026, 10, 25, 1, 30)))

        let late = try ZoneRules(posixTZ: "XXX3YYY,M3.2.0/25,M11.1.0/-1")
        // Second Sunday of March + 25 h = Monday 01:00 (-03); first Sunday of November - 1 h.
        #expect(late.nextTransition(after: utc(2026, 1, 1)) == utc(2026, 3, 9, 4))
        #expect(late.nextTransition(after: utc(2026, 3, 9, 4)) == utc(2026, 11, 1, 1))
        #expect(late.resolve(local(2026, 3, 9, 1, 30)) == .skipped)
        #expect(late.resolve(local(2026, 3, 9, 0, 30)) == .unique(utc(2026, 3, 9, 3, 30)))

        let jerusalem = try ZoneRules(posixTZ: "IST-2IDT,M3.4.4/26,M10.5.0")
        #expect(jerusalem.nextTransition(after: utc(2026, 1, 1)) == utc(2026, 3, 27))
        #expect(jerusalem.nextTransition(after: utc(2026, 3, 27)) == utc(2026, 10, 24, 23))

        let gaza = try ZoneRules(posixTZ: "EET-2EEST,M3.4.4/50,M10.4.4/50")
        // Fourth Thursday + 50 h = Saturday 02:00 local.
        #expect(gaza.nextTransition(after: utc(2026, 1, 1)) == utc(2026, 3, 28))
        #expect(gaza.nextTransition(after: utc(2026, 3, 28)) == utc(2026, 10, 23, 23))
        #expect(try ZoneRules(posixTZ: "AAA0BBB,M3.2.0/167,M11.1.0/-167").offset(at: utc(2026, 7, 1)) == 3600)
    }

    /// `EST5EDT4,0/0,J365/25` is RFC 8536's example of daylight time all year round.
    @Test func daylightAllYear() throws {
        let permanent = try ZoneRules(posixTZ: "EST5EDT4,0/0,J365/25")
        for t in [
            utc(2026, 1, 1), utc(2026, 1, 1, 4, 59, 59), utc(2026, 1, 1, 5), utc(2026, 6, 1),
            utc(2026, 12, 31, 23, 59, 59), utc(2028, 12, 31, 12), utc(2029, 1, 1, 5), utc(2100, 1, 1, 2),
        ] {
            #expect(permanent.offset(at: t) == -14400)
            #expect(permanent.abbreviation(at: t) == "EDT")
        }
        #expect(permanent.nextTransition(after: utc(2026, 1, 1)) == nil)
        #expect(permanent.resolve(local(2026, 1, 1, 0, 30)) == .unique(utc(2026, 1, 1, 4, 30)))
        // The same instant for start and end within one year means no daylight time.
        let never = try ZoneRules(posixTZ: "AAA0BBB,J100/0,J100/1")
        #expect(never.offset(at: utc(2026, 4, 10, 0, 30)) == 0)
        #expect(never.offset(at: utc(2026, 7, 1)) == 0)
    }

    @Test func badStringsAreRejectedWithAReason() {
        let bad = [
            "", "E5", "EST", "EST5EDT,M3.2.0", "EST5EDT,M13.1.0,M11.1.0", "EST5EDT,M3.6.0,M11.1.0",
            "EST5EDT,M3.2.7,M11.1.0", "EST25", "<AB>5", "<+03", "<+03>", "EST5EDT,J0,J365",
            "EST5EDT,366,0", "EST5EDT,M3.2.0/168,M11.1.0", "EST5x", "EST5EDT,", "EST5:60",
            "EST5EDT,M3.2.0,M11.1.0,", "EST 5", "EST5EDT4x", "EST0005", "ÉST5", "<+0 3>-3",
            "EST5EDT,J60/0,", "EST-", ":Europe/Berlin",
        ]
        for text in bad {
            #expect {
                _ = try ZoneRules(posixTZ: text)
            } throws: { error in
                guard case .badPosixTZ(let what, let reason) = error as? ZoneError else { return false }
                return what == text && !reason.isEmpty
            }
        }
    }

    @Test func errorReasonsPointAtTheProblem() {
        do {
            _ = try ZoneRules(posixTZ: "EST5EDT,M13.1.0,M11.1.0")
            Issue.record("accepted month 13")
        } catch {
            #expect(error.description.contains("month 13 outside 1...12"))
            #expect(error.description.contains("EST5EDT,M13.1.0,M11.1.0"))
        }
    }
}
