import Foundation
import GateHarness
import Locks
import SystemIO
import TestSupport
import Testing

/// Notifications from the daemon to a real HTTP receiver on loopback
/// (docs/requests-and-notifications.md#notifications): every event kind arrives as the
/// documented JSON object, each once; with the receiver down the events wait in the store,
/// `status` and `doctor` say so, and after a restart in between every one arrives and none
/// twice. The daemon runs in the test's process on a clock the test steps (a flush every
/// 5 s, the summary at its time) but for the upstream check, which runs the binary under
/// libfaketime.
@Suite(.serialized, .blocking) struct NotificationsIntegrationTests {
    /// The receiver: every request it took, and whether it takes them.
    final class Receiver: @unchecked Sendable {
        let got = Lock<[TestHTTPServer.Request]>([])
        var server: TestHTTPServer!

        init() throws {
            server = try TestHTTPServer { [unowned self] request in
                got.withLock { $0.append(request) }
                return .respond(TestHTTPServer.Response(status: 200, text: "{}"))
            }
        }

        var events: [TestJSON] {
            got.withLock { $0 }.compactMap { try? TestJSON.parse(String(decoding: $0.body, as: UTF8.self)) }
        }
        var ids: [String] { events.compactMap { $0["id"]?.string } }
    }

    static let child = "127.0.0.2"

    /// A lists folder whose only list was written 8 days ago (trouble), with the
    /// checkout's app catalogue.
    static func oldLists(_ scratch: ScratchDirectory) throws -> String {
        let services = GateRun.checkout.appendingPathComponent("blocklists/services.json").path
        _ = try scratch.write("lists/services.json", try String(contentsOfFile: services, encoding: .utf8))
        let file = try scratch.write("lists/adult/list.txt", "adult.example\n")
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -8 * 86_400)], ofItemAtPath: file)
        return scratch.path("lists")
    }

    @Test func everyEventArrivesOnceAndWaitsOutAReceiverThatIsDownAcrossARestart() throws {
        let receiver = try Receiver()
        let dns = try DnsmasqUpstream(["--address=/example.test/127.0.0.1", "--address=/tiktok.com/127.0.0.1"])
        let childPort = FreePort.tcpAndUDP()
        let scratch = try ScratchDirectory("pg-notify-lists")
        let lists = try Self.oldLists(scratch)
        let tokenFile = try scratch.write("token", "tk_0123456789\n")
        let site = try ParentPageIntegrationTests.PageSite(
            policy: PolicyDocuments.json(
                blocked: ["reddit.com"],
                screenTime: #""per_app_limits": [{"bundle_id": "com.zhiliaoapp.musically", "daily_minutes": 1}]"#),
            upstream: dns.spec,
            settings: """
                child_listen = 127.0.0.1:\(childPort)
                lists = \(lists)
                web_names = gate.lan
                notify_url = \(receiver.server.origin)/hook
                notify_format = json
                notify_token_file = \(tokenFile)
                notify_circumvention = 2
                notify_events = ask, new_device, budget_spent, circumvention, trouble
                """)
        // Every kind but the daily summary, which has its test at its time: a gateway that
        // starts after `summary_time` (20:00) would send today's at once. In the test's
        // process: each flush (every 5 s) is a step of its clock, which goes on across the
        // restart.
        let clock = ManualClock(wall: SystemClock().wall())
        func started() throws -> ParentPageIntegrationTests.InProcessPage {
            try ParentPageIntegrationTests.InProcessPage(site, arguments: ["--allow-local-destinations"], clock: clock)
        }
        var page = try started()
        defer { page.gate.stop() }
        func dig(_ name: String, from source: String = Self.child) throws -> DigAnswer {
            try page.gate.dig(name, "A", ["-b", source])
        }
        func flush() { #expect(page.gate.advance(by: .seconds(5))) }

        // Trouble: the lists are 8 days old (the notifier looks at once, then every 15 s).
        let trouble = try #require(waitForPrefix(receiver, "trouble:lists:"), "\(page.gate.log)")
        #expect(trouble["event"]?.string == "trouble")
        #expect(trouble["title"]?.string == "Gateway: the category lists are 8 days old")
        #expect(trouble["data"]?["check"]?.string == "lists")
        let first = try #require(receiver.got.withLock { $0.first })
        #expect(first.method == "POST" && first.path == "/hook")
        #expect(first.header("Authorization") == "Bearer tk_0123456789")
        #expect(first.header("Content-Type") == "application/json")

        // A new device: the child's address asks its first name.
        #expect(try dig("www.example.test").answerData == ["127.0.0.1"])
        flush()
        let device = try #require(waitForPrefix(receiver, "device:\(Self.child)"), "\(receiver.ids)")
        #expect(device["event"]?.string == "new_device")
        #expect(device["click"]?.string == "https://gate.lan:\(page.webPort)/devices")
        #expect(device["data"]?["address"]?.string == Self.child)

        // Three encrypted-DNS names in a minute, past the threshold of 2: one event.
        for name in ["dns.google", "cloudflare-dns.com", "dns.quad9.net"] { _ = try dig(name) }
        flush()
        let attempts = try #require(
            waitForPrefix(receiver, "circumvention:\(Self.child):"), "\(receiver.ids)")
        #expect(attempts["event"]?.string == "circumvention")
        #expect(attempts["data"]?["count"]?.string == "3")
        #expect(attempts["message"]?.string?.hasPrefix("\(Self.child) tried 3 times in 10 minutes") == true)

        // TikTok's one minute a day is spent by one query.
        _ = try dig("www.tiktok.com")
        flush()
        let spent = try #require(waitForPrefix(receiver, "budget:default:tiktok:"), "\(receiver.ids)")
        #expect(spent["title"]?.string == "default: today's TikTok time is used up")
        #expect(spent["data"]?["limit_minutes"]?.string == "1")

        // A question with HTML in its note: the text as typed, the click to its place.
        let home = "http://gate.home.arpa:\(childPort)"
        func ask(_ fields: [String], from source: String) throws -> CurlResult {
            try Curl.run(
                ["--interface", source, "--resolve", "gate.home.arpa:\(childPort):127.0.0.1"]
                    + fields.flatMap { ["--data-urlencode", $0] } + ["\(home)/ask"])
        }
        #expect(try ask(["kind=site", "name=www.reddit.com", "note=<b>homework</b>"], from: Self.child).status == 303)
        let question = try #require(waitForPrefix(receiver, "ask:"), "\(receiver.ids)")
        #expect(question["title"]?.string == "default asks: Open www.reddit.com")
        #expect(question["message"]?.string?.hasPrefix("“<b>homework</b>”") == true)
        let requestID = try #require(question["data"]?["request"]?.string)
        #expect(question["click"]?.string == "https://gate.lan:\(page.webPort)/#request-\(requestID)")

        // The receiver goes away: the next events wait, and status and doctor say so. First
        // the question must be marked sent: the receiver has it before the notifier has
        // its answer, and one still on its way would be a third waiting event.
        let delivered = waitUntil(timeout: .seconds(10)) {
            let status = try? GateCommand.run(["status", "--json", "--config", page.config])
            return (try? TestJSON.parse(status?.stdout ?? "")["notifications"]?["waiting"]?.int) == 0
        }
        #expect(delivered)
        receiver.server.stop()
        #expect(try ask(["kind=time", "note=second"], from: "127.0.0.3").status == 303)
        _ = try dig("www.example.test", from: "127.0.0.3")
        // The question at once, the device at the next flush.
        flush()
        var queue: TestJSON?
        let waiting = try waitUntil(timeout: 15_000_000_000, interval: 200_000_000) {
            let status = try GateCommand.run(["status", "--json", "--config", page.config])
            queue = try TestJSON.parse(status.stdout)["notifications"]
            return queue?["waiting"]?.int == 2
        }
        #expect(waiting, "\(String(describing: queue))")
        #expect(queue?["last_error"]?.string?.isEmpty == false, "\(String(describing: queue))")
        let text = try GateCommand.run(["status", "--config", page.config]).stdout
        #expect(text.contains("notifications: json to 127.0.0.1:\(receiver.server.port): 5 sent"), "\(text)")
        #expect(text.contains("; 2 waiting since"), "\(text)")

        // A restart in between; then the receiver is back.
        #expect(page.gate.stop())
        let before = receiver.ids
        try receiver.server.start()
        page = try started()
        let back = try #require(
            waitForPrefix(receiver, "device:127.0.0.3"), "\(receiver.ids) \(page.gate.log)")
        #expect(back["event"]?.string == "new_device")
        _ = waitUntil(timeout: 10_000_000_000, interval: 100_000_000) { receiver.ids.count >= before.count + 2 }
        let ids = receiver.ids
        #expect(ids.count == Set(ids).count, "no event twice: \(ids)")
        #expect(ids.filter { $0.hasPrefix("ask:") }.count == 2, "\(ids)")
        #expect(Set(ids).count == 7, "lists, two devices, attempts, TikTok, two questions: \(ids)")
        // The receiver has the last before the gateway has marked it sent.
        #expect(Self.settled(page.metricsPort) { _ in true }, "nothing left waiting")
        let doctor = try GateCommand.run(["doctor", "--config", page.config])
        #expect(doctor.stdout.contains("ok   notifications: 7 sent to 127.0.0.1"), "\(doctor.stdout)")
    }

    /// The daily summary at `summary_time` (the daemon in the test's process, on a clock
    /// the test sets): its figures are the test's own queries, blocks, app minutes,
    /// question and device, on the page's API and in the notification.
    @Test func theDailySummaryHasTheFiguresOfTheDay() throws {
        let receiver = try Receiver()
        let scratch = try ScratchDirectory("pg-summary-day")
        // 2026-12-07T19:58:00Z.
        let start: Int64 = 1_796_673_480
        let dns = try DnsmasqUpstream(["--address=/tiktok.com/127.0.0.1", "--address=/example.test/127.0.0.1"])
        let childPort = FreePort.tcpAndUDP()
        let site = try ParentPageIntegrationTests.PageSite(
            policy: PolicyDocuments.json(
                blocked: ["reddit.com"], categories: ["adult"],
                screenTime: #""per_app_limits": [{"bundle_id": "com.zhiliaoapp.musically", "daily_minutes": 60}]"#),
            upstream: dns.spec,
            settings: """
                child_listen = 127.0.0.1:\(childPort)
                lists = \(try Self.oldLists(scratch))
                notify_url = \(receiver.server.origin)/hook
                notify_format = json
                notify_events = summary
                summary_time = 20:00
                """)
        let page = try ParentPageIntegrationTests.InProcessPage(
            site, arguments: ["--allow-local-destinations"], clock: ManualClock(wall: WallTime(unixSeconds: start)))
        defer { page.gate.stop() }
        func dig(_ name: String) throws -> DigAnswer { try page.gate.dig(name, "A", ["-b", Self.child]) }

        // 19:58: three blocked names, two of the adult category, TikTok; a question.
        for _ in 0..<3 { #expect(try dig("reddit.com").extendedErrors.first?.hasPrefix("15 (Blocked)") == true) }
        for _ in 0..<2 { #expect(try dig("adult.example").extendedErrors.first?.hasPrefix("15 (Blocked)") == true) }
        #expect(try dig("www.tiktok.com").answerData == ["127.0.0.1"])
        let asked = try Curl.run([
            "--interface", Self.child, "--resolve", "gate.home.arpa:\(childPort):127.0.0.1",
            "--data-urlencode", "kind=time", "--data-urlencode", "note=<i>one more level</i>",
            "http://gate.home.arpa:\(childPort)/ask",
        ])
        #expect(asked.status == 303, "\(asked)")
        // 19:59:30: TikTok again (a second minute, and a second minute online).
        #expect(page.gate.advance(by: .seconds(90)))
        #expect(try dig("www.tiktok.com").answerData == ["127.0.0.1"])
        // The flush that looks at the day: the next, 5 s on.
        #expect(page.gate.advance(by: .seconds(5)))
        #expect(
            Self.settled(page.metricsPort) {
                $0["phosra_gate_hits_flushed_timestamp_seconds"] ?? 0 >= Double(start + 95)
            },
            "a flush at 19:59:35 looked at the day")
        #expect(receiver.events.isEmpty, "nothing before summary_time")

        // 20:00:30: the day's summary, once.
        #expect(page.gate.advance(by: .seconds(55)))
        let sent = try #require(waitForPrefix(receiver, "summary:default:"), "\(page.gate.log)")
        #expect(sent["event"]?.string == "summary")
        #expect(sent["title"]?.string == "default on 2026-12-07: 2 min online, 5 blocks", "\(sent)")
        #expect(
            sent["message"]?.string
                == "Apps: TikTok 2 min\nBlocked: adult 2\nMost blocked: reddit.com (3), adult.example (2)\n"
                + "Asked 1 time: 0 allowed, 0 no, 1 not answered\nNew devices: \(Self.child)", "\(sent)")
        let session = try page.login()
        let listed = try page.curl("/api/summaries", ["-b", session.jar])
        let summary = try #require(try TestJSON.parse(listed.body)["summaries"]?.array?.first, "\(listed.body)")
        #expect(summary["queries"]?.int == 7, "\(listed.body)")
        #expect(summary["blocks"]?.int == 5)
        #expect(summary["online_minutes"]?.int == 2)
        #expect(summary["apps"]?.array?.first?["minutes"]?.int == 2)
        #expect(summary["top_blocked"]?.array?.first?["name"]?.string == "reddit.com")
        #expect(summary["top_blocked"]?.array?.first?["count"]?.int == 3)
        let shown = try page.curl("/summaries", ["-b", session.jar])
        #expect(shown.body.contains("More time — “&lt;i&gt;one more level&lt;/i&gt;”: not answered"), "\(shown.body)")
        // The Summaries page in a real browser, for the docs.
        let browser = try PageBrowser(scratch: page.scratch)
        defer { browser.close() }
        try browser.get(page.base + "/")
        try browser.fill("input[name=password]", ParentPageIntegrationTests.password)
        try browser.click("button", text: "Log in")
        try browser.get(page.base + "/summaries")
        #expect(try browser.text("section.summary h2") == "default · 2026-12-07")
        try browser.screenshot("parent-page-summaries-phone.png", width: 360)
        // Two flushes more than now: one at least after the flush that made the summary.
        #expect(Self.flushed(2, [page.metricsPort]) { page.gate.advance(by: .seconds(5)) })
        #expect(receiver.ids.filter { $0.hasPrefix("summary:") }.count == 1, "once a day: \(receiver.ids)")
    }

    /// The daemon runs `doctor`'s upstream check on itself every five minutes: an upstream
    /// that refuses every query, found in two rounds in a row, is one `trouble` event that
    /// names it, and the same outage found again is not sent again.
    @Test func anUpstreamFailingTwoRoundsInARowIsTrouble() throws {
        try #require(FakeWallClock.isInstalled, "libfaketime (Debian faketime)")
        let receiver = try Receiver()
        let scratch = try ScratchDirectory("pg-notify-checks")
        let policy = try scratch.write("policy.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        let start: Int64 = 1_796_000_000
        let clock = try FakeWallClock(scratch, at: start)
        // Nothing listens on the discard port: every query to it is refused.
        let dead = "127.0.0.1:9"
        let metricsPort = FreePort.tcpAndUDP()
        let gate = try GateRun(
            [
                "--policy", policy, "--upstream", dead, "--state-dir", scratch.path("state"),
                "--lists", GateRun.checkout.appendingPathComponent("blocklists").path,
                "--notify-url", "\(receiver.server.origin)/hook", "--notify-format", "json",
                "--notify-events", "trouble", "--metrics-listen", "127.0.0.1:\(metricsPort)",
            ], scratch: scratch, port: FreePort.tcpAndUDP(), environment: clock.environment)
        defer { gate.daemon.stop() }

        // Five minutes at a time; SIGUSR1 wakes the notifier for the round now due. The
        // first round may come before or after the first step, so up to three steps.
        var trouble: TestJSON?
        for step in 1...3 where trouble == nil {
            clock.set(start + Int64(step) * 301)
            gate.daemon.signal(SIGUSR1)
            trouble = waitForPrefix(receiver, "trouble:upstream:", seconds: 5)
        }
        let event = try #require(trouble, "\(receiver.ids) \(gate.log)")
        #expect(event["title"]?.string == "Gateway: the upstream check fails")
        #expect(event["data"]?["check"]?.string == "upstream")
        let subject = try #require(event["data"]?["subject"]?.string)
        #expect(subject.contains(dead), "\(subject)")
        #expect(event["message"]?.string?.contains("does not answer") == true, "\(event)")

        // Another round, still failing: the same outage, not a second event.
        clock.set(start + 4 * 301)
        gate.daemon.signal(SIGUSR1)
        #expect(
            Self.settled(metricsPort) {
                $0["phosra_gate_notify_round_timestamp_seconds"] ?? 0 >= Double(start + 4 * 301)
            },
            "the notifier's round at that time has run")
        #expect(receiver.ids.filter { $0.hasPrefix("trouble:upstream:") }.count == 1, "\(receiver.ids)")
    }

    /// For a check that nothing (more) was sent: waits until the daemon's `/metrics` on
    /// `port` meet `condition` (a round of the flush or the notifier at or after an instant,
    /// or a number of flushes) with no event waiting, so whatever those rounds made has
    /// been delivered by then.
    static func settled(_ port: UInt16, _ condition: (MetricsScrape) -> Bool) -> Bool {
        waitUntil(timeout: .seconds(20), interval: 100_000_000) {
            guard let scrape = try? MetricsScrape(port: port) else { return false }
            return condition(scrape) && scrape["phosra_gate_notifications_waiting"] == 0
        }
    }

    /// Moves the clock of daemons in the test's process (`step`: 5 s, a flush's interval)
    /// until each on `ports` has flushed `count` times more than now, with nothing waiting
    /// to be sent. After each step it waits for the flush the step brought: a sync thread
    /// busy when the clock moved (held off the CPU on a loaded machine) makes it after the
    /// step returns, and a second step before it would make the two one.
    static func flushed(_ count: Int, _ ports: [UInt16], step: () -> Bool) -> Bool {
        func flushes() -> [Double] {
            ports.map { MetricsScrape.value("phosra_gate_hits_flushes_total", port: $0) ?? -1 }
        }
        // From a reading of each (a scrape can fail while the machine is loaded).
        var now: [Double] = []
        let read = waitUntil(timeout: .seconds(10)) {
            now = flushes()
            return !now.contains(-1)
        }
        guard read else { return false }
        let targets = now.map { $0 + Double(count) }
        for _ in 0..<(count + 4) {
            let before = flushes()
            if zip(before, targets).allSatisfy({ $0 >= $1 }) { break }
            _ = step()
            _ = waitUntil(timeout: .seconds(5), interval: 10_000_000) {
                zip(flushes(), before).allSatisfy { $0 > $1 }
            }
        }
        return zip(ports, targets).allSatisfy { port, target in
            settled(port) { $0["phosra_gate_hits_flushes_total"] ?? 0 >= target }
        }
    }

    func waitForPrefix(_ receiver: Receiver, _ prefix: String, seconds: UInt64 = 20) -> TestJSON? {
        var found: TestJSON?
        _ = waitUntil(timeout: seconds * 1_000_000_000, interval: 100_000_000) {
            found = receiver.events.first { $0["id"]?.string?.hasPrefix(prefix) == true }
            return found != nil
        }
        return found
    }
}
