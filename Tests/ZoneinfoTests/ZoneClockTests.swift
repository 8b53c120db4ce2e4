import Testing
import Zoneinfo

/// `ZoneClock` against the zone it remembers: the same wall time at every instant, and
/// the zone read once per offset change (counted, not timed).
@Suite struct ZoneClockTests {
    static let zones = [
        "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Sao_Paulo", "Asia/Kolkata",
    ]

    /// Instants from 2018 to 2028 an odd step apart, with every offset change of the zone
    /// and the seconds either side of it, in order.
    func instants(in rules: ZoneRules) -> [Int64] {
        let start = utc(2018, 1, 1)
        let end = utc(2028, 1, 1)
        var all = Array(stride(from: start, to: end, by: 3 * 3600 + 7 * 60 + 13))
        var cursor = start
        while let change = rules.nextTransition(after: cursor), change < end {
            all += [change - 1, change, change + 1]
            cursor = change
        }
        return all.sorted()
    }

    @Test(arguments: zones)
    func theWallTimeIsTheZonesAtEveryInstant(name: String) throws {
        let rules = try zone(name)
        var clock = ZoneClock()
        for instant in instants(in: rules) {
            #expect(
                clock.localDateTime(at: instant, in: rules) == rules.localDateTime(at: instant), "\(name) \(instant)")
        }
    }

    @Test(arguments: zones)
    func theZoneIsReadOncePerOffsetChange(name: String) throws {
        let rules = try zone(name)
        var changes = 0
        var cursor = utc(2018, 1, 1)
        while let change = rules.nextTransition(after: cursor), change < utc(2028, 1, 1) {
            changes += 1
            cursor = change
        }
        var clock = ZoneClock()
        for instant in instants(in: rules) { _ = clock.localDateTime(at: instant, in: rules) }
        // Walking forward: the first instant, then each change. Berlin has two a year.
        #expect(clock.zoneReads == changes + 1)
        if name == "Europe/Berlin" { #expect(changes == 20) }
        if name == "UTC" { #expect(changes == 0) }
    }

    @Test func aLoopAskingEverySecondReadsTheZoneOnce() throws {
        let berlin = try zone("Europe/Berlin")
        var clock = ZoneClock()
        let noon = utc(2026, 7, 1, 10)
        for second in 0..<100_000 {
            _ = clock.localDateTime(at: noon + Int64(second), in: berlin)
        }
        #expect(clock.zoneReads == 1)
        #expect(clock.localDateTime(at: noon + 99_999, in: berlin) == local(2026, 7, 2, 15, 46, 39))
    }

    @Test func aClockSetBackAcrossAChangeIsReadAgain() throws {
        let berlin = try zone("Europe/Berlin")
        var clock = ZoneClock()
        let summer = utc(2026, 10, 25, 0, 30)  // 02:30 CEST, half an hour before the change
        let winter = utc(2026, 10, 25, 1, 30)  // 02:30 CET
        #expect(clock.localDateTime(at: winter, in: berlin) == local(2026, 10, 25, 2, 30))
        #expect(clock.localDateTime(at: summer, in: berlin) == local(2026, 10, 25, 2, 30))
        #expect(clock.localDateTime(at: summer - 3600, in: berlin) == local(2026, 10, 25, 1, 30))
        #expect(clock.localDateTime(at: winter, in: berlin) == local(2026, 10, 25, 2, 30))
        #expect(clock.zoneReads == 4, "each step back, and the step forward over the change")
    }

    @Test func anotherZoneIsReadAfreshEvenUnderTheSameName() throws {
        let one = try ZoneRules(posixTZ: "XST-1")
        let two = try ZoneRules(posixTZ: "XST-1")
        let other = try zone("Asia/Kolkata")
        #expect(one == two, "equal rules are equal, whatever their identity")
        var clock = ZoneClock()
        let instant = utc(2026, 12, 6, 6)
        #expect(clock.localDateTime(at: instant, in: one) == local(2026, 12, 6, 7))
        #expect(clock.localDateTime(at: instant, in: one) == local(2026, 12, 6, 7))
        #expect(clock.zoneReads == 1, "the same zone, remembered")
        #expect(clock.localDateTime(at: instant, in: other) == local(2026, 12, 6, 11, 30))
        #expect(clock.localDateTime(at: instant, in: two) == local(2026, 12, 6, 7))
        #expect(clock.zoneReads == 3, "each new zone read")
    }
}
