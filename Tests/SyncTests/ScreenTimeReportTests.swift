import Policy
import Store
import TestSupport
import Testing

@testable import Sync

/// The daily `screen_time` report from stored minutes (docs/sync.md#screen-time): a minute
/// counts once in the total and once per kind, apps most-used first.
@Suite(.blocking) struct ScreenTimeReportTests {
    static func minutes(_ slots: [Int]) -> [UInt8] {
        var set = MinuteSet()
        for slot in slots { set.insert(slot: slot) }
        return set.bytes
    }

    @Test func minutesAreCountedOnceAcrossAppsAndKinds() throws {
        let catalogue = try ServiceCatalogue.decode(
            Array(
                """
                {"format": 1, "services": [
                  {"id": "tiktok", "name": "TikTok", "kind": "social",
                   "bundle_ids": {"ios": ["com.zhiliaoapp.musically"], "android": ["com.ss.android.ugc.trill"]},
                   "domains": ["tiktok.com"], "source": "t"},
                  {"id": "snap", "name": "Snapchat", "kind": "social",
                   "bundle_ids": {"ios": ["com.toyopagroup.picaboo"]}, "domains": ["snapchat.com"], "source": "t"},
                  {"id": "youtube", "name": "YouTube", "kind": "video",
                   "bundle_ids": {"ios": ["com.google.ios.youtube"]}, "domains": ["youtube.com"], "source": "t"}]}
                """.utf8))
        let day = 20_520  // 2026-03-08
        let rows = [
            ServiceMinutesRow(profile: "kid", day: day, service: "tiktok", minutes: Self.minutes([1, 2, 3])),
            ServiceMinutesRow(profile: "kid", day: day, service: "snap", minutes: Self.minutes([3, 4])),
            ServiceMinutesRow(profile: "kid", day: day, service: "youtube", minutes: Self.minutes([2, 9])),
            ServiceMinutesRow(profile: "kid", day: day, service: "gone", minutes: Self.minutes([20])),
            ServiceMinutesRow(profile: "kid", day: day, service: "empty", minutes: Self.minutes([])),
            ServiceMinutesRow(profile: "kid", day: day, service: "corrupt", minutes: [1, 2, 3]),
        ]
        let report = ScreenTimeReport(day: day, rows: rows, services: catalogue)
        #expect(report.date == "2026-03-08")
        #expect(report.totalMinutes == 6, "minutes 1, 2, 3, 4, 9 and 20")
        #expect(report.byCategory == ["social": 4, "video": 2, "other": 1])
        #expect(report.topApps.map(\.service) == ["tiktok", "snap", "youtube", "gone"])
        #expect(report.topApps.map(\.minutes) == [3, 2, 2, 1])
        #expect(report.topApps.first?.bundleID == "com.zhiliaoapp.musically")
        #expect(report.topApps.first?.bundleIDs.count == 2)
        #expect(report.topApps.last?.bundleID == "gone", "a service the catalogue lost keeps its id")

        // With the minutes online stored, they are the total: not an app, not a kind.
        let online = ServiceMinutesRow(
            profile: "kid", day: day, service: ServiceUsage.online, minutes: Self.minutes([1, 2, 3, 4, 5, 6, 7]))
        let counted = ScreenTimeReport(day: day, rows: rows + [online], services: catalogue)
        #expect(counted.totalMinutes == 7)
        #expect(counted.byCategory == report.byCategory)
        #expect(counted.topApps.map(\.service) == ["tiktok", "snap", "youtube", "gone"])
    }
}
