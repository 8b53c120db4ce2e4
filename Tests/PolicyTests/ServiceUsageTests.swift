import Testing
import Zoneinfo

@testable import Policy

/// Minutes per app service and local day (docs/services.md#budgets): one bit per real
/// minute, shared by every device of the profile, kept until the store has it.
@Suite struct ServiceUsageTests {
    @Test func aMinuteCountsOnceWhateverAsksWithinIt() {
        let usage = ServiceUsage()
        let day = 20_000
        let start: Int64 = 1_728_000_000  // a multiple of 60
        for second in [0, 1, 30, 59] { usage.record("tiktok", at: start + Int64(second), day: day) }
        #expect(usage.minutes("tiktok", day: day) == 1)
        usage.record("tiktok", at: start + 60, day: day)
        usage.record("tiktok", at: start + 185, day: day)
        #expect(usage.minutes("tiktok", day: day) == 3)
        #expect(usage.minutes("youtube", day: day) == 0)
        #expect(usage.minutes("tiktok", day: day + 1) == 0)
        #expect(usage.minutes(day: day) == ["tiktok": 3])
    }

    @Test func aLongDayOfDaylightSavingCountsEveryRealMinute() throws {
        // New York, 2026-11-01: 25 hours, 01:00–02:00 twice. Every minute of the day is
        // used: 1,500 minutes, not 1,440.
        let zone = try ZoneRules.load(named: "America/New_York")
        let usage = ServiceUsage()
        var instant: Int64 = 1_793_505_600  // 2026-11-01 00:00 EDT
        let day = zone.localDateTime(at: instant).daysSince1970
        #expect(zone.localDateTime(at: instant).description == "2026-11-01T00:00:00")
        while zone.localDateTime(at: instant).daysSince1970 == day {
            usage.record("youtube", at: instant, day: day)
            instant += 60
        }
        #expect(usage.minutes("youtube", day: day) == 1500)
    }

    @Test func minuteSetsRoundTripThroughTheirBytes() {
        var set = MinuteSet()
        for slot in [0, 63, 64, 700, 1499] { set.insert(slot: slot) }
        let bytes = set.bytes
        #expect(bytes.count == 192)
        #expect(MinuteSet(bytes: bytes) == set)
        #expect(MinuteSet(bytes: bytes.dropLast()) == nil, "a wrong length is refused")
        var other = MinuteSet()
        other.insert(slot: 1)
        other.insert(slot: 700)
        #expect(set.union(other).count == 6)
        #expect(MinuteSet.slot(unixSeconds: -1) == 1499, "before 1970 too")
    }

    @Test func unsavedMinutesAreTakenOnceAndGivenBackWhenTheWriteFails() {
        let usage = ServiceUsage()
        usage.record("tiktok", at: 0, day: 10)
        usage.record("tiktok", at: 60, day: 11)
        usage.restore(
            ServiceUsage.Key(day: 11, service: "youtube"),
            {
                var set = MinuteSet()
                set.insert(slot: 5)
                return set
            }())
        let taken = usage.takeUnsaved(today: 11)
        #expect(Set(taken.map(\.key)) == [.init(day: 10, service: "tiktok"), .init(day: 11, service: "tiktok")])
        #expect(usage.takeUnsaved(today: 11).isEmpty, "taken once; restored minutes are already saved")
        // Day 10 is forgotten once saved; today stays for decisions.
        #expect(usage.minutes("tiktok", day: 10) == 0)
        #expect(usage.minutes("tiktok", day: 11) == 1)
        #expect(usage.minutes("youtube", day: 11) == 1)
        usage.unsaved(taken)
        #expect(usage.takeUnsaved(today: 11).count == 2, "a failed write keeps them for the next flush")
    }

    @Test func aWhatIfUsageFillsTheGivenMinutes() {
        let usage = ServiceUsage(day: 3, minutes: ["tiktok": 55, "youtube": 0, "huge": 5000])
        #expect(usage.minutes("tiktok", day: 3) == 55)
        #expect(usage.minutes("youtube", day: 3) == 0)
        #expect(usage.minutes("huge", day: 3) == MinuteSet.slots)
    }
}
