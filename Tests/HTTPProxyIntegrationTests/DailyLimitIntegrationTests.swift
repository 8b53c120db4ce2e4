import Foundation
import TestSupport
import Testing

/// The daily limit through the real binary (docs/services.md#the-daily-limit), its wall
/// clock set by the test (libfaketime; the monotonic clock runs real), devices of one
/// child at 127.0.0.1, .2 and .3 on `dig` and the proxy: half an hour of background only
/// spends nothing, browsing spends a minute a minute and two devices in one minute spend
/// one, at the limit a browsing name answers `daily_limit` and an open tunnel closes
/// within a second while the background names and an always-allowed app still resolve, a
/// restart keeps the count, the parent's "+30 min" on the page lifts it for thirty
/// minutes, and the local midnight of a 23-hour day (New York, the spring change) resets it.
@Suite(.serialized, .blocking) struct DailyLimitIntegrationTests {
    static let catalogue = """
        {"format": 1, "services": [
          {"id": "whatsapp", "name": "WhatsApp", "kind": "messaging",
           "bundle_ids": {"ios": ["net.whatsapp.WhatsApp"]}, "domains": ["whatsapp.com", "whatsapp.net"],
           "source": "test fixture"}]}
        """

    static func policy(limit: Int) -> String {
        """
        {"version": 4, "child_id": "00000000-0000-0000-0000-0000000000c1", "child_age": 10,
         "screen_time": {"daily_limit_minutes": \(limit), "always_allowed_apps": ["net.whatsapp.WhatsApp"]},
         "web_filter": {"level": "", "safe_search": false, "blocked_domains": [], "allowed_domains": [],
                        "blocked_categories": []}}
        """
    }

    /// 2026-03-09 00:00 in New York (EDT): the end of the 23-hour day the clocks went forward.
    static let midnight: Int64 = 1_773_028_800
    /// 22:00 EDT that evening.
    static let evening = midnight - 2 * 3_600

    /// What an idle phone and tablet ask for on their own: push, time, captive-portal and
    /// connectivity checks, system update checks.
    static let background = [
        "1-courier.push.apple.com", "time.apple.com", "captive.apple.com", "gdmf.apple.com", "mesu.apple.com",
        "mtalk.google.com", "connectivitycheck.gstatic.com", "time.android.com", "update.googleapis.com",
        "2.android.pool.ntp.org",
    ]

    static let password = "correct horse battery"

    /// A scratch directory with the lists (the catalogue with WhatsApp) and the policy
    /// with `limit`; libfaketime is required.
    static func setUp(_ name: String, limit: Int) throws -> (ScratchDirectory, String) {
        try #require(FakeWallClock.isInstalled, "libfaketime (Debian faketime)")
        let scratch = try ScratchDirectory(name)
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        try scratch.write("lists/services.json", catalogue)
        return (scratch, try scratch.write("policy.json", policy(limit: limit)))
    }

    @Test func minutesOnlineReachTheLimitWhichPlusThirtyLiftsAndMidnightResets() throws {
        let (scratch, policy) = try Self.setUp("pg-daily", limit: 3)
        let origin = try RawOrigin()
        let dns = try DnsmasqUpstream(
            [
                "example.test", "apple.com", "google.com", "gstatic.com", "android.com", "googleapis.com", "ntp.org",
                "whatsapp.com", "whatsapp.net",
            ].map { "--address=/\($0)/127.0.0.1" })
        let state = scratch.path("state")
        let set = try GateCommand.run(["web-password", "--state-dir", state], stdin: Self.password + "\n")
        try #require(set.status == 0, "\(set.stderr)")

        let clock = try FakeWallClock(scratch, at: Self.evening)
        let port = FreePort.tcpAndUDP()
        let proxyPort = FreePort.tcpAndUDP()
        let webPort = FreePort.tcpAndUDP()
        func start() throws -> GateRun {
            let gate = try GateRun(
                [
                    "--lists", scratch.path("lists"), "--upstream", dns.spec, "--policy", policy,
                    "--state-dir", state, "--timezone", "America/New_York",
                    "--proxy-listen", "127.0.0.1:\(proxyPort)", "--connect-ports", "\(origin.port)",
                    "--allow-local-destinations", "--web-listen", "127.0.0.1:\(webPort)",
                    "--web-http-listen", "127.0.0.1:\(FreePort.tcpAndUDP())",
                ], scratch: scratch, port: port, environment: clock.environment)
            try #require(gate.daemon.waitFor("service=web", timeout: 10), "\(gate.log)")
            try #require(gate.daemon.waitFor("service=proxy", timeout: 10), "\(gate.log)")
            return gate
        }
        func dig(_ name: String, from device: String) throws -> DigAnswer {
            try Dig.query(name, "A", port: port, options: ["-b", device])
        }
        func status() -> String { (try? GateCommand.run(["status", "--state-dir", state]))?.stdout ?? "" }
        /// `status` once a flush (every 5 s) has written `text`.
        func statusShows(_ text: String) -> Bool {
            waitUntil(timeout: .seconds(12)) { status().contains(text) }
        }
        let blocked = "15 (Blocked): (daily_limit)"

        var gate = try start()
        // 22:00–22:29: two idle devices, a background name each every minute.
        for minute in 0..<30 {
            clock.set(Self.evening + Int64(minute) * 60 + 5)
            for (index, device) in ["127.0.0.2", "127.0.0.3"].enumerated() {
                let name = Self.background[(minute + index * 3) % Self.background.count]
                #expect(try dig(name, from: device).answerData == ["127.0.0.1"], "\(name)")
            }
        }
        #expect(statusShows("daily limit: 0 of 3 minutes used on 2026-03-08"), "\(status())")

        // 22:30: both devices browse in the same minute: one minute.
        clock.set(Self.evening + 30 * 60 + 5)
        #expect(try dig("www.example.test", from: "127.0.0.2").answerData == ["127.0.0.1"])
        #expect(try dig("news.example.test", from: "127.0.0.3").answerData == ["127.0.0.1"])
        #expect(statusShows("daily limit: 1 of 3 minutes used"), "\(status())")
        // 22:31: a third device opens a tunnel and moves bytes: the second minute.
        clock.set(Self.evening + 31 * 60 + 5)
        let tunnel = try ProxyClient(port: proxyPort, timeout: 8)
        tunnel.send("CONNECT news.example.test:\(origin.port) HTTP/1.1\r\nHost: news.example.test\r\n\r\n")
        #expect(tunnel.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 200"), "\(gate.log)")
        tunnel.send("x")
        #expect(origin.waitForBytes(1) == Array("x".utf8))
        #expect(statusShows("daily limit: 2 of 3 minutes used"), "\(status())")

        // 22:32: the third minute is answered; after it, the limit.
        clock.set(Self.evening + 32 * 60 + 5)
        #expect(try dig("www.example.test", from: "127.0.0.2").answerData == ["127.0.0.1"])
        let closed = tunnel.secondsUntilClosed()
        #expect(closed != nil && closed! < 2.5, "the open tunnel closed \(closed ?? -1) s after the limit")
        #expect(try dig("www.example.test", from: "127.0.0.2").extendedErrors == [blocked])
        #expect(try dig("other.example.test", from: "127.0.0.3").extendedErrors == [blocked])
        for name in ["1-courier.push.apple.com", "mtalk.google.com", "time.android.com", "web.whatsapp.com"] {
            #expect(try dig(name, from: "127.0.0.3").answerData == ["127.0.0.1"], "\(name) still resolves")
        }
        let refused = try ProxyClient(port: proxyPort, timeout: 8)
        refused.send("CONNECT news.example.test:\(origin.port) HTTP/1.1\r\nHost: news.example.test\r\n\r\n")
        let answer = refused.read(until: "\r\n\r\n")
        #expect(answer.hasPrefix("HTTP/1.1 403") && answer.contains("X-Phosra-Block: daily_limit"), "\(answer)")
        #expect(statusShows("daily limit: 3 of 3 minutes used on 2026-03-08, 0 left"), "\(status())")
        let json = try GateCommand.run(["status", "--json", "--state-dir", state])
        let daily = try TestJSON.parse(json.stdout)["profiles"]?.array?.first?["daily_limit"]
        #expect(daily?["used_minutes"]?.int == 3 && daily?["limit_minutes"]?.int == 3, "\(json.stdout)")

        // A restart keeps the count.
        gate.daemon.stop()
        gate = try start()
        #expect(try dig("www.example.test", from: "127.0.0.2").extendedErrors == [blocked], "\(gate.log)")

        // 22:33: the parent gives "+30 min" on the page: thirty more minutes online.
        clock.set(Self.evening + 33 * 60 + 5)
        let jar = scratch.path("jar")
        let base = "https://127.0.0.1:\(webPort)"
        let login = try Curl.run(
            [
                "-k", "-c", jar, "-H", "Content-Type: application/json", "-d", #"{"password": "\#(Self.password)"}"#,
                base + "/api/login",
            ])
        let csrf = try #require(TestJSON.parse(login.body)["csrf_token"]?.string, "\(login)")
        let extended = try Curl.run(
            [
                "-k", "-b", jar, "-H", "Content-Type: application/json", "-H", "X-CSRF-Token: \(csrf)", "-d",
                #"{"minutes": 30}"#, base + "/api/profiles/default/extend",
            ])
        #expect(extended.status == 200, "\(extended)")
        let profiles = try Curl.run(["-k", "-b", jar, base + "/api/profiles"])
        let card = try TestJSON.parse(profiles.body)["profiles"]?.array?.first
        #expect(card?["daily_limit"]?["limit_minutes"]?.int == 33, "\(profiles.body)")
        #expect(card?["daily_limit"]?["used_minutes"]?.int == 3, "\(profiles.body)")
        // One name a minute, 22:33 to 23:02: thirty minutes, each answered; then blocked.
        // (Half a minute in: the clock set at 22:33:05 ran on while the parent logged in.)
        for minute in 33..<63 {
            clock.set(Self.evening + Int64(minute) * 60 + 30)
            let device = minute % 2 == 0 ? "127.0.0.2" : "127.0.0.3"
            #expect(try dig("www.example.test", from: device).answerData == ["127.0.0.1"], "minute \(minute)")
        }
        clock.set(Self.evening + 63 * 60 + 30)
        #expect(try dig("www.example.test", from: "127.0.0.2").extendedErrors == [blocked])
        #expect(statusShows("daily limit: 33 of 33 minutes used on 2026-03-08, 0 left"), "\(status())")
        // `check` reads the stored minutes and the parent's bonus; `--budget-used` asks "what if".
        let check = ["check", "--policy", policy, "--state-dir", state, "--timezone", "America/New_York"]
        let at = ["--at", "2026-03-08T23:03:40"]
        let now = try GateCommand.run(check + at + ["www.example.test"])
        #expect(now.stdout.contains("block daily_limit"), "\(now)")
        #expect(now.stdout.contains("daily limit: 33 of 33 minutes online today, 0 left"), "\(now)")
        let whatIf = try GateCommand.run(check + at + ["--budget-used", "daily=20m", "www.example.test"])
        #expect(whatIf.stdout.contains("allow default"), "\(whatIf)")
        #expect(whatIf.stdout.contains("daily limit: 20 of 33 minutes online today, 13 left"), "\(whatIf)")

        // Still blocked twenty seconds before midnight; reset ten seconds after it (the
        // day had 23 hours: a midnight counted from the previous one would be at 01:00).
        clock.set(Self.midnight - 20)
        #expect(try dig("www.example.test", from: "127.0.0.2").extendedErrors == [blocked])
        clock.set(Self.midnight + 10)
        #expect(try dig("www.example.test", from: "127.0.0.2").answerData == ["127.0.0.1"], "\(gate.log)")
        #expect(statusShows("daily limit: 1 of 3 minutes used on 2026-03-09"), "\(status())")
        gate.daemon.stop()
    }

    /// The accuracy of the minutes online (docs/services.md#how-accurate-it-is): a scripted
    /// day of one child's phone (127.0.0.2) and laptop (127.0.0.3), in UTC, with no limit in
    /// reach. 08:00–12:00 both are idle: the systems' background traffic (push every 4
    /// minutes, a connectivity check every 15, time every 30, an update check every
    /// hour), a chat connection the phone opened at 08:02 that only keeps itself alive (300
    /// bytes every 20 minutes), and two app refreshes the list cannot know (09:17, 10:42).
    /// 12:00–12:44 the phone is used: names in every minute but eight, a video through the
    /// proxy in 24 minutes (six of them without a name), two minutes of reading with nothing
    /// on the network.
    /// 12:35–13:04 the laptop is used, a name most minutes, one minute of reading. The truth:
    /// 65 minutes (12:00–13:04); idle: 0.
    @Test func aScriptedDayIsCountedWithinTenPercent() throws {
        let (scratch, policy) = try Self.setUp("pg-day", limit: 600)
        let chat = try RawOrigin()
        let video = try RawOrigin()
        let dns = try DnsmasqUpstream(
            [
                "example.test", "apple.com", "google.com", "gstatic.com", "android.com", "googleapis.com", "ntp.org",
                "microsoft.com", "msftconnecttest.com", "windows.com",
            ].map { "--address=/\($0)/127.0.0.1" })
        let state = scratch.path("state")
        /// 2026-03-10 08:00 UTC.
        let morning: Int64 = 1_773_129_600
        let clock = try FakeWallClock(scratch, at: morning)
        let port = FreePort.tcpAndUDP()
        let proxyPort = FreePort.tcpAndUDP()
        let webPort = FreePort.tcpAndUDP()
        let set = try GateCommand.run(["web-password", "--state-dir", state], stdin: Self.password + "\n")
        try #require(set.status == 0, "\(set.stderr)")
        let gate = try GateRun(
            [
                "--lists", scratch.path("lists"), "--upstream", dns.spec, "--policy", policy, "--state-dir", state,
                "--timezone", "UTC", "--proxy-listen", "127.0.0.1:\(proxyPort)", "--connect-ports",
                "\(chat.port),\(video.port)", "--allow-local-destinations", "--web-listen", "127.0.0.1:\(webPort)",
                "--web-http-listen", "127.0.0.1:\(FreePort.tcpAndUDP())",
            ], scratch: scratch, port: port, environment: clock.environment)
        defer { gate.daemon.stop() }
        try #require(gate.daemon.waitFor("service=proxy", timeout: 10), "\(gate.log)")
        try #require(gate.daemon.waitFor("service=web", timeout: 10), "\(gate.log)")
        // The minutes online as the daemon holds them now, from the parent's page: no wait
        // for the store's flush.
        let jar = scratch.path("jar")
        let base = "https://127.0.0.1:\(webPort)"
        let login = try Curl.run(
            [
                "-k", "-c", jar, "-H", "Content-Type: application/json", "-d", #"{"password": "\#(Self.password)"}"#,
                base + "/api/login",
            ])
        try #require(login.status == 200, "\(login)")
        func online() -> Int {
            let profiles = try? Curl.run(["-k", "-b", jar, base + "/api/profiles"])
            let card = (try? TestJSON.parse(profiles?.body ?? ""))?["profiles"]?.array?.first
            return card?["daily_limit"]?["used_minutes"]?.int ?? -1
        }
        let phone = "127.0.0.2"
        let laptop = "127.0.0.3"
        func at(_ hour: Int, _ minute: Int, _ second: Int = 5) {
            clock.set(morning + Int64((hour - 8) * 3_600 + minute * 60 + second))
        }
        func ask(_ name: String, from device: String) {
            let answer = try? Dig.query(name, "A", port: port, options: ["-b", device])
            #expect(answer?.answerData == ["127.0.0.1"], "\(name): \(String(describing: answer))")
        }
        func tunnel(to origin: RawOrigin, _ name: String, from device: String) throws -> ProxyClient {
            let fd = try #require(LoopbackSocketFactory.connect(tcp: true, from: device, to: proxyPort, timeout: 5))
            let client = ProxyClient(descriptor: fd, timeout: 8)
            client.send("CONNECT \(name):\(origin.port) HTTP/1.1\r\nHost: \(name)\r\n\r\n")
            #expect(client.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 200"), "\(gate.log)")
            return client
        }

        // 08:00–11:59, idle.
        var chatLine: ProxyClient?
        for minute in 0..<240 {
            let (hour, inHour) = (8 + minute / 60, minute % 60)
            var names: [(String, String)] = []
            if minute % 4 == 0 { names += [("1-courier.push.apple.com", phone), ("client.wns.windows.com", laptop)] }
            if minute % 15 == 1 {
                names += [("captive.apple.com", phone), ("www.msftconnecttest.com", laptop)]
            }
            if minute % 30 == 2 { names += [("time.apple.com", phone), ("time.windows.com", laptop)] }
            if minute % 60 == 3 {
                names += [("mesu.apple.com", phone), ("settings-win.data.microsoft.com", laptop)]
            }
            if minute % 60 == 4 { names += [("mtalk.google.com", phone), ("update.googleapis.com", phone)] }
            if (hour, inHour) == (9, 17) { names.append(("api.weather.example.test", phone)) }
            if (hour, inHour) == (10, 42) { names.append(("mail.example.test", laptop)) }
            let keepAlive = minute % 20 == 10
            guard !names.isEmpty || minute == 2 || keepAlive else { continue }
            at(hour, inHour)
            for (name, device) in names { ask(name, from: device) }
            if minute == 2 { chatLine = try tunnel(to: chat, "chat.example.test", from: phone) }
            // A keep-alive's 300 bytes: whichever minute the proxy's next tick puts them in,
            // they are under the threshold.
            if keepAlive, let chatLine { chatLine.send([UInt8](repeating: 0x61, count: 300)) }
        }
        let idle = online()

        // 12:00–13:04, in use.
        let phoneQuiet: Set<Int> = [7, 8, 21, 22, 23, 30, 31, 40]  // no name asked: video or reading
        let phoneVideo = Set(0..<45).subtracting([7, 8]).filter { $0 % 2 == 1 || phoneQuiet.contains($0) }
        let laptopQuiet: Set<Int> = [48]
        var stream: ProxyClient?
        for minute in 0..<65 {
            at(12 + minute / 60, minute % 60)
            if minute == 0 { stream = try tunnel(to: video, "video.example.test", from: phone) }
            // The video's bytes first, in a minute nothing counted yet: the proxy's tick (once a
            // second, later under a loaded machine's) counts it, which is waited for before the
            // clock moves on.
            if phoneVideo.contains(minute), let stream {
                let before = online()
                stream.send([UInt8](repeating: 0x61, count: 64 * 1_024))
                let counted = waitUntil(timeout: .seconds(10)) { online() > before }
                #expect(counted, "12:\(minute): a minute of video through the proxy counts")
            }
            if minute < 45, !phoneQuiet.contains(minute) {
                ask("feed\(minute % 5).example.test", from: phone)
                ask("img.example.test", from: phone)
            }
            if (35..<65).contains(minute), !laptopQuiet.contains(minute) {
                ask("docs.example.test", from: laptop)
                ask("cdn\(minute % 3).example.test", from: laptop)
            }
        }
        let total = online()
        let used = total - idle
        let truth = 65
        let report =
            "idle 08:00–12:00 counted \(idle) min; use counted \(used) of \(truth) min "
            + "(\(String(format: "%+.1f", Double(used - truth) * 100 / Double(truth))) %); day \(total) of \(truth)"
        print("daily-limit accuracy: \(report)")
        #expect(idle < 5, "\(report)")
        #expect(abs(total - truth) * 10 <= truth, "\(report)")
        _ = (chatLine, stream)
    }
}
