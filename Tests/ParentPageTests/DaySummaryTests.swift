import Policy
import Store
import TestSupport
import Testing
import Zoneinfo

@testable import ParentPage

/// A child's day summed up from the store: the minutes, the blocks by category, the most
/// blocked names, the questions and the new devices of that day only, and the words of
/// the notification and the page (escaped).
@Suite struct DaySummaryTests {
    /// 2026-12-07T20:00:00Z (a Monday).
    let now: Int64 = 1_796_673_600
    var midnight: Int64 { now - 20 * 3_600 }

    func minutes(_ slots: [Int]) -> [UInt8] {
        var set = MinuteSet()
        for slot in slots { set.insert(slot: slot) }
        return set.bytes
    }

    @Test func theFiguresAreThoseOfTheDay() throws {
        let scratch = try ScratchDirectory("pg-summary")
        let store = try Store.open(directory: scratch.path, now: now)
        let day = ZoneRules.utc.localDateTime(at: now).daysSince1970
        try store.saveServiceMinutes(
            [
                ServiceMinutesRow(profile: "mia", day: day, service: "tiktok", minutes: minutes([600, 601, 602])),
                ServiceMinutesRow(
                    profile: "mia", day: day, service: ServiceUsage.online, minutes: minutes([600, 601, 602, 700])),
                ServiceMinutesRow(profile: "mia", day: day - 1, service: "tiktok", minutes: minutes([1, 2, 3, 4])),
                ServiceMinutesRow(profile: "leo", day: day, service: "tiktok", minutes: minutes([5])),
            ], served: [], budgets: nil, merge: { _, new in new })
        try store.addActivity(
            profile: "mia", hourStart: midnight + 10 * 3_600, queries: 40,
            blocksByReason: ["category": 3, "blocked_domain": 2],
            blocksByCategory: ["adult": 3])
        try store.addActivity(profile: "mia", hourStart: midnight - 3_600, queries: 99, blocksByReason: ["category": 9])
        func blocked(_ domain: String, _ count: Int, at time: Int64, category: String? = nil) -> HitRow {
            HitRow(
                profile: "mia", domain: domain, matched: domain,
                reason: category == nil ? "blocked_domain:\(domain)" : "category:\(category!)",
                category: category, client: "192.168.1.20", source: "dns", count: count, firstSeen: time,
                lastSeen: time,
                policyVersion: 1)
        }
        try store.recordHistory([
            blocked("reddit.com", 2, at: midnight + 36_000),
            blocked("adult.example", 3, at: midnight + 36_100, category: "adult"),
            blocked("old.example", 7, at: midnight - 100),
        ])
        _ = try store.addRequest(
            RequestRow(
                profile: "mia", device: "aa:bb:cc:dd:ee:01", address: "192.168.1.20", kind: "site",
                target: "reddit.com",
                note: "<b>homework</b>", askedAt: midnight + 36_200, expiresAt: now + 14_400))
        try store.recordSightings([
            ClientSighting(
                profile: "mia", client: "aa:bb:cc:dd:ee:01", address: "192.168.1.20", mac: "aa:bb:cc:dd:ee:01",
                firstSeen: midnight + 30_000, lastSeen: midnight + 36_000, queries: 40),
            ClientSighting(
                profile: "mia", client: "aa:bb:cc:dd:ee:02", address: "192.168.1.21", mac: "aa:bb:cc:dd:ee:02",
                firstSeen: midnight - 90_000, lastSeen: midnight + 36_000, queries: 4),
        ])

        let summary = try DaySummary.make(
            store: store, profile: "mia", zone: .utc, now: now, appName: { $0 == "tiktok" ? "TikTok" : nil })
        #expect(summary.date == "2026-12-07" && summary.day == day)
        #expect(summary.onlineMinutes == 4)
        #expect(summary.apps == [.init(id: "tiktok", name: "TikTok", minutes: 3)])
        #expect(summary.queries == 40 && summary.blocks == 5)
        #expect(summary.blocksByCategory == [.init(name: "adult", count: 3)])
        #expect(summary.topBlocked == [.init(name: "adult.example", count: 3), .init(name: "reddit.com", count: 2)])
        #expect(summary.requests.map(\.note) == ["<b>homework</b>"] && summary.requests[0].answer == nil)
        #expect(summary.newDevices.map(\.client) == ["aa:bb:cc:dd:ee:01"])
        #expect(summary.title == "mia on 2026-12-07: 4 min online, 5 blocks")
        #expect(
            summary.lines == [
                "Apps: TikTok 3 min", "Blocked: adult 3", "Most blocked: adult.example (3), reddit.com (2)",
                "Asked 1 time: 0 allowed, 0 no, 1 not answered", "New devices: aa:bb:cc:dd:ee:01",
            ])
        #expect(DaySummary(json: summary.json()) == summary)
        #expect(summary.html.contains("Open reddit.com — “&lt;b&gt;homework&lt;/b&gt;”: not answered"))
        #expect(!summary.html.contains("<b>homework"))
    }
}
