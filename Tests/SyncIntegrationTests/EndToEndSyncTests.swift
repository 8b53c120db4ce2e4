import EventLoop
import Foundation
import SystemIO
import TestSupport
import Testing

/// The whole sync journey with the real binary, a fake API and dig: register, enforce the
/// policy, take a change, report and acknowledge it.
@Suite(.serialized, .blocking) struct EndToEndSyncTests {
    @Test func registerEnforceChangeReportAndAck() throws {
        let fixture = try SyncFixture()
        let registered = try fixture.register()
        #expect(registered.status == 0, "\(registered.stderr)")
        let device = try #require(fixture.api.devices.first)
        #expect(registered.stdout.contains("registered device \(device.id)"))
        let key = try #require(fixture.deviceKey)
        #expect(key.count == 64)
        let mode =
            try FileManager.default.attributesOfItem(atPath: fixture.state + "/devices/default.key")[.posixPermissions]
            as? Int
        #expect(mode == 0o600)
        #expect(!registered.stdout.contains(key) && !registered.stderr.contains(key))
        #expect(!registered.stdout.contains(FakePhosraAPI.defaultParentToken))
        #expect(device.osVersion.count <= 20 && device.appVersion.count <= 20)

        let gate = try fixture.run()
        defer { gate.daemon.stop() }
        #expect(fixture.eventually { gate.log.contains("event=policy_applied") }, "\(gate.log)")
        #expect(try gate.dig("www.reddit.com").extendedErrors == ["15 (Blocked): (blocked_domain:reddit.com)"])

        // A parent change is enforced within one poll interval.
        fixture.api.updatePolicy(fixture.policyID) { $0.webFilter.blockedDomains.append("newsite.example") }
        let clock = SystemClock()
        let changed = clock.now()
        #expect(try fixture.eventually(4) { try gate.dig("newsite.example").status == "NXDOMAIN" })
        #expect(clock.now() - changed < 3_500_000_000)

        // Acks and enforcement status name the versions applied.
        #expect(fixture.eventually { fixture.api.acks.map(\.version) == [42, 43] }, "\(fixture.api.acks)")
        let statuses = fixture.api.reports.filter { $0.reportType == "enforcement_status" }
        #expect(statuses.compactMap { $0.payload["policy_version"]?.int } == [42, 43])
        let results = statuses.last?.payload["results"]?.array ?? []
        let byCategory = Dictionary(
            results.compactMap { r in r["category"]?.string.map { ($0, r["status"]?.string ?? "") } },
            uniquingKeysWith: { a, _ in a })
        #expect(byCategory["web_filter_level"] == "partial", "moderate selects categories without lists here")
        #expect(byCategory["web_safesearch"] == "enforced")
        #expect(byCategory["web_custom_blocklist"] == "enforced")
        #expect(byCategory["time_daily_limit"] == "partial")
        #expect(fixture.api.device(device.id)?.lastPolicyVersion == 43)

        // Blocked queries come back as blocked_attempt events with exact counts.
        for _ in 0..<3 { _ = try gate.dig("www.reddit.com") }
        _ = try gate.dig("www.reddit.com", "AAAA")
        #expect(
            fixture.eventually(10) {
                let events = fixture.api.reports.filter { $0.reportType == "blocked_attempt" }
                    .flatMap { $0.payload["events"]?.array ?? [] }
                    .filter { $0["domain"]?.string == "www.reddit.com" }
                return events.reduce(0) { $0 + ($1["count"]?.int ?? 0) } == 5
            })
        let log = gate.log
        #expect(!log.contains(key), "the device key never appears in a log line")
        #expect(!log.contains(FakePhosraAPI.defaultParentToken))
        let useragent = fixture.api.requests.first?.header("User-Agent") ?? ""
        #expect(useragent.hasPrefix("phosra-gate/"))
    }
}
