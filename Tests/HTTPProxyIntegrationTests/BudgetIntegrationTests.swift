import Foundation
import TestSupport
import Testing

/// Daily app budgets through the real binary (docs/services.md#budgets), its wall clock
/// set by the test (libfaketime; the monotonic clock runs real): two devices of one
/// profile spend one budget, the DNS answer flips to `limit:<id>` and an open tunnel to
/// the app closes within a second, a restart keeps the minutes, the local midnight of a
/// 23-hour day (New York, the spring change) refills it, and the API receives the
/// enforcement rows and the day's `screen_time` report.
@Suite(.serialized, .blocking) struct BudgetIntegrationTests {
    static let catalogue = """
        {"format": 1, "services": [
          {"id": "tiktok", "name": "TikTok", "kind": "social",
           "bundle_ids": {"ios": ["com.zhiliaoapp.musically"], "android": ["com.ss.android.ugc.trill"]},
           "domains": ["tiktok.com", "tiktokcdn.com"], "source": "test fixture"},
          {"id": "youtube", "name": "YouTube", "kind": "video",
           "bundle_ids": {"ios": ["com.google.ios.youtube"]}, "domains": ["youtube.com"], "source": "test fixture"},
          {"id": "roblox", "name": "Roblox", "kind": "multiplayer",
           "bundle_ids": {"ios": ["com.roblox.robloxmobile"]}, "domains": ["roblox.com"], "source": "test fixture"}]}
        """

    /// 2026-03-08 23:57:20 in New York (EDT, the day the clocks went forward: 23 hours).
    static let lateEvening: Int64 = 1_773_028_640
    /// 2026-03-09 00:00:10 EDT: ten seconds into the next local day (a day of 24 hours
    /// after the previous midnight would end at 01:00).
    static let justAfterMidnight: Int64 = 1_773_028_810

    @Test func twoDevicesSpendOneBudgetThatARestartKeepsAndMidnightRefills() throws {
        try #require(FakeWallClock.isInstalled, "libfaketime (Debian faketime)")
        let scratch = try ScratchDirectory("pg-budget")
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        try scratch.write("lists/services.json", Self.catalogue)
        let origin = try RawOrigin()
        let dns = try DnsmasqUpstream([
            "--address=/tiktok.com/127.0.0.1", "--address=/tiktokcdn.com/127.0.0.1",
            "--address=/youtube.com/127.0.0.1", "--address=/example.test/127.0.0.1",
        ])
        // The API's policy: TikTok 2 minutes a day (either platform's id), Roblox blocked.
        let api = try FakePhosraAPI()
        let child = api.addChild(age: 10)
        var policy = FakePolicy(version: 7)
        policy.webFilter.level = "moderate"
        policy.contentFilter.blockedApps = ["com.roblox.robloxmobile"]
        policy.screenTime.perAppLimits = [
            .init(bundleID: "com.zhiliaoapp.musically", dailyMinutes: 5),
            .init(bundleID: "com.ss.android.ugc.trill", dailyMinutes: 2),
        ]
        _ = api.addPolicy(policy, to: child)
        let state = scratch.path("state")
        let token = try scratch.write("token", FakePhosraAPI.defaultParentToken + "\n")
        let registered = try GateCommand.run([
            "register", "--api", api.baseURL, "--child-id", child, "--parent-token-file", token, "--state-dir", state,
        ])
        try #require(registered.status == 0, "\(registered.stderr)")

        let clock = try FakeWallClock(scratch, at: Self.lateEvening)
        let port = FreePort.tcpAndUDP()
        let proxyPort = FreePort.tcpAndUDP()
        func start() throws -> GateRun {
            let gate = try GateRun(
                [
                    "--lists", scratch.path("lists"), "--upstream", dns.spec, "--api", api.baseURL,
                    "--state-dir", state, "--timezone", "America/New_York", "--poll-interval", "2s",
                    "--report-interval", "1s", "--proxy-listen", "127.0.0.1:\(proxyPort)",
                    "--connect-ports", "\(origin.port)", "--allow-local-destinations",
                ], scratch: scratch, port: port, environment: clock.environment)
            // From the store when `register` fetched it, else from the first poll.
            let enforcing = waitUntil(timeout: .seconds(15)) {
                gate.log.contains("event=listening service=proxy")
                    && (gate.log.contains("source=cached version=7")
                        || gate.log.contains("event=policy_applied profile=default version=7 "))
            }
            try #require(enforcing, "\(gate.log)")
            return gate
        }
        func dig(_ name: String, from device: String) throws -> DigAnswer {
            try Dig.query(name, "A", port: port, options: ["-b", device])
        }
        let limit = "15 (Blocked): (limit:tiktok)"

        var gate = try start()
        // Minute 23:57: the first phone opens TikTok (a tunnel) and the second asks for
        // YouTube; the answer for a budgeted app lives at most 60 s in a device's cache.
        let tunnel = try ProxyClient(port: proxyPort, timeout: 8)
        tunnel.send("CONNECT tiktok.com:\(origin.port) HTTP/1.1\r\nHost: tiktok.com\r\n\r\n")
        #expect(tunnel.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 200"), "\(gate.log)")
        tunnel.send("x")
        #expect(origin.waitForBytes(1) == Array("x".utf8))
        let first = try dig("tiktok.com", from: "127.0.0.2")
        #expect(first.answerData == ["127.0.0.1"], "\(first)")
        #expect(first.answerTTLs.allSatisfy { $0 <= 60 }, "\(first)")
        #expect(try dig("www.youtube.com", from: "127.0.0.3").answerData == ["127.0.0.1"])
        #expect(try dig("www.roblox.com", from: "127.0.0.3").extendedErrors == ["15 (Blocked): (service:roblox)"])

        // Minute 23:58: the other phone spends the second and last minute.
        clock.set(Self.lateEvening + 60)
        #expect(try dig("v16.tiktokcdn.com", from: "127.0.0.3").answerData == ["127.0.0.1"])
        let closed = tunnel.secondsUntilClosed()
        #expect(closed != nil && closed! < 2.5, "the open tunnel closed \(closed ?? -1) s after the budget was spent")
        #expect(try dig("tiktok.com", from: "127.0.0.2").extendedErrors == [limit])
        #expect(try dig("tiktokcdn.com", from: "127.0.0.3").extendedErrors == [limit])
        #expect(try dig("www.example.test", from: "127.0.0.2").answerData == ["127.0.0.1"], "other names open")
        let refused = try ProxyClient(port: proxyPort, timeout: 8)
        refused.send("CONNECT tiktok.com:\(origin.port) HTTP/1.1\r\nHost: tiktok.com\r\n\r\n")
        let answer = refused.read(until: "\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 403") && answer.contains("X-Phosra-Block: limit:tiktok"), "\(answer)")

        // `status` (after a flush) and `check` say it; a restart keeps the minutes.
        let shown = waitUntil(timeout: .seconds(8)) {
            let status = try? GateCommand.run(["status", "--state-dir", state])
            return status?.stdout.contains("app tiktok: 2 of 2 minutes used on 2026-03-08, 0 left") ?? false
        }
        #expect(shown, "\((try? GateCommand.run(["status", "--state-dir", state]))?.stdout ?? "")")
        gate.daemon.stop()
        gate = try start()
        #expect(try dig("tiktok.com", from: "127.0.0.2").extendedErrors == [limit], "after a restart\n\(gate.log)")

        // Still blocked ten seconds before midnight; refilled ten seconds after it.
        clock.set(Self.justAfterMidnight - 20)
        #expect(try dig("www.tiktok.com", from: "127.0.0.2").extendedErrors == [limit])
        clock.set(Self.justAfterMidnight)
        let refilled = try dig("www.tiktok.com", from: "127.0.0.2")
        #expect(refilled.answerData == ["127.0.0.1"], "\(refilled)")

        // The day is over: its report arrives, with the minutes the devices used.
        let reported = waitUntil(timeout: .seconds(10)) {
            api.reports.contains { $0.reportType == "screen_time" }
        }
        #expect(reported, "\(gate.log)")
        let reports = api.reports.filter { $0.reportType == "screen_time" }.map(\.payload)
        #expect(reports.count == 1, "one report for the day")
        let day = try #require(reports.first)
        #expect(day["date"]?.string == "2026-03-08")
        #expect(day["total_minutes"]?.int == 2, "23:57 and 23:58")
        #expect(day["by_category"]?["social"]?.int == 2)
        #expect(day["by_category"]?["video"]?.int == 1)
        let apps = (day["top_apps"]?.array ?? []).map { "\($0["service"]?.string ?? "?")=\($0["minutes"]?.int ?? -1)" }
        #expect(apps == ["tiktok=2", "youtube=1"], "\(day)")
        #expect(day["top_apps"]?.array?.first?["bundle_id"]?.string == "com.zhiliaoapp.musically")

        // The enforcement rows of the apps.
        let rows = api.reports.filter { $0.reportType == "enforcement_status" }.last?.payload["results"]?.array ?? []
        let statuses = Dictionary(
            rows.map { ($0["category"]?.string ?? "?", $0["status"]?.string ?? "?") }, uniquingKeysWith: { $1 })
        #expect(statuses["time_per_app_limit"] == "enforced", "\(rows)")
        #expect(statuses["content_block_title"] == "enforced", "\(rows)")
        gate.daemon.stop()
    }
}
