import Store
import Testing

@testable import Notify

/// What a flush's facts become: new devices, spent budgets, and a device past the
/// threshold of attempts around the filter within 10 minutes, each once.
@Suite struct FlushWatchTests {
    let now: Int64 = 1_772_323_200

    func watch(threshold: Int = 5) -> FlushWatch {
        FlushWatch(
            threshold: threshold, page: "https://gate:8443/", appName: { $0 == "tiktok" ? "TikTok" : nil },
            deviceName: { _ in nil })
    }

    func attempt(_ client: String, _ name: String, count: Int, at time: Int64) -> HitRow {
        HitRow(
            profile: "alice", domain: name, matched: name, reason: "circumvention:\(name)", category: nil,
            client: client, source: "dns", count: count, firstSeen: time, lastSeen: time, policyVersion: 1)
    }

    @Test func attemptsPastTheThresholdWithinTheWindowAreOneEvent() {
        let watch = watch()
        let device = "192.168.1.20"
        // 5 in 10 minutes is not more than the threshold.
        #expect(
            watch.notices(
                newDevices: [], attempts: [attempt(device, "dns.google", count: 5, at: now)], budgets: [], now: now
            ).isEmpty)
        let crossed = watch.notices(
            newDevices: [], attempts: [attempt(device, "nordvpn.com", count: 1, at: now + 60)], budgets: [],
            now: now + 60)
        #expect(crossed.count == 1)
        #expect(crossed.first?.event == .circumvention)
        #expect(crossed.first?.message == "192.168.1.20 tried 6 times in 10 minutes (nordvpn.com, dns.google).")
        // More within the window: no second event.
        #expect(
            watch.notices(
                newDevices: [], attempts: [attempt(device, "x.com", count: 9, at: now + 120)], budgets: [],
                now: now + 120
            ).isEmpty)
        // Another device has its own count.
        #expect(
            watch.notices(
                newDevices: [], attempts: [attempt("192.168.1.21", "x.com", count: 9, at: now + 130)], budgets: [],
                now: now + 130
            ).count == 1)
    }

    @Test func attemptsOlderThanTheWindowNoLongerCount() {
        let watch = watch()
        _ = watch.notices(newDevices: [], attempts: [attempt("d", "a", count: 5, at: now)], budgets: [], now: now)
        #expect(
            watch.notices(
                newDevices: [], attempts: [attempt("d", "b", count: 1, at: now + 601)], budgets: [], now: now + 601
            ).isEmpty)
        #expect(FlushWatch.isAttempt("circumvention:dns.google") && FlushWatch.isAttempt("sni:x.com"))
        #expect(FlushWatch.isAttempt("tls_unreadable") && !FlushWatch.isAttempt("category:adult"))
    }

    @Test func aSpentBudgetIsFoundUnderOneIdADay() {
        let watch = watch()
        let spent = BudgetStatusRow(profile: "alice", service: "tiktok", day: 20_500, dailyMinutes: 30, used: 30)
        let left = BudgetStatusRow(profile: "alice", service: "youtube", day: 20_500, dailyMinutes: 60, used: 59)
        let online = BudgetStatusRow(profile: "alice", service: "*online", day: 20_500, dailyMinutes: 120, used: 121)
        let events = watch.notices(newDevices: [], attempts: [], budgets: [spent, left, online], now: now)
        #expect(events.map(\.id) == ["budget:alice:tiktok:20500", "budget:alice:online:20500"])
        #expect(events.first?.title == "alice: today's TikTok time is used up")
        // Found again at the next flush under the same ids, which the notifier keeps once.
        #expect(
            watch.notices(newDevices: [], attempts: [], budgets: [spent, online], now: now + 5).map(\.id)
                == events.map(\.id))
        var tomorrow = spent
        tomorrow.day += 1
        #expect(watch.notices(newDevices: [], attempts: [], budgets: [tomorrow], now: now + 86_400).count == 1)
    }
}
