import Foundation
import TestSupport
import Testing

/// Two gateways on one LAN as a home runs them (docs/two-gateways.md), in network
/// namespaces the test makes: a switch whose namespace is also the machine with
/// PostgreSQL and the upstream resolver (198.51.100.1), gateway A (.2) and gateway B (.3),
/// a child's phone (.20) and a parent's laptop (.30), each a device of its own on the
/// bridge. The phone asks both gateways, as a phone given two DNS servers does; the parent
/// uses either gateway's page. Addresses are from a documentation range and exist only
/// inside these namespaces.
@Suite(.serialized, .blocking) struct TwoGatewaysLANTests {
    /// The LAN, its database and upstream, and the two daemons; `stop()` takes it all away.
    final class LAN {
        static let switchAddress = "198.51.100.1"
        static let gatewayAddresses = ["198.51.100.2", "198.51.100.3"]
        static let phone = (address: "198.51.100.20", mac: "02:00:00:00:00:20")
        static let laptop = "198.51.100.30"
        static let tiktok = "203.0.113.80"
        static let reddit = "203.0.113.81"
        static let example = "203.0.113.82"
        /// The page's name, which the parent's laptop may resolve to either gateway.
        static let pageName = "gate.home.arpa"

        let net: NetworkNamespaces
        let scratch: ScratchDirectory
        let server: PostgresServer
        let upstream: SpawnedServer
        let gateways: [SpawnedServer]
        let configs: [String]
        var phoneNamespace: String { net.devices[2] }
        var laptopNamespace: String { net.devices[3] }

        init(policy: String, clock: FakeWallClock?) throws {
            net = try NetworkNamespaces.make(devices: 4)
            do {
                scratch = try ScratchDirectory("pg-two-lan")
                try net.bridgedLAN(
                    gateway: Self.switchAddress + "/24",
                    devices: Self.gatewayAddresses.map { ($0 + "/24", nil) } + [
                        (Self.phone.address + "/24", Self.phone.mac), (Self.laptop + "/24", nil),
                    ])
                server = try PostgresServer(in: (net, net.gateway), address: Self.switchAddress)
                upstream = try net.upstreamDnsmasq(
                    address: Self.switchAddress,
                    records: [
                        "www.tiktok.com,\(Self.tiktok)", "www.reddit.com,\(Self.reddit)", "example.com,\(Self.example)",
                    ], logFile: scratch.path("upstream.log"))
                let policyPath = try scratch.write("policy.json", policy)
                let passwordFile = try server.passwordFile()
                var configs: [String] = []
                var gateways: [SpawnedServer] = []
                for (index, address) in Self.gatewayAddresses.enumerated() {
                    let config = try scratch.write(
                        "gate-\(index).conf",
                        """
                        lan_interfaces = eth0
                        allow_clients = 198.51.100.0/24
                        dns_listen = \(address):53
                        upstream = \(Self.switchAddress):5399
                        proxy_listen =
                        web_listen = \(address):8443
                        web_http_listen = \(address):8080
                        child_listen = \(address):80
                        state_dir = \(scratch.path("state-\(index)"))
                        lists = \(GateRun.checkout.appendingPathComponent("blocklists").path)
                        timezone = UTC
                        policy = \(policyPath)
                        shared_store = \(server.url)
                        shared_store_password_file = \(passwordFile)
                        web_names = \(Self.pageName)
                        """)
                    // The parent sets the page's password on A only: B takes it from the shared store.
                    if index == 0 {
                        let set = try GateCommand.run(
                            ["web-password", "--config", config], stdin: ParentPageIntegrationTests.password + "\n")
                        #expect(set.status == 0, "\(set.stderr)")
                    }
                    // The clock's variables are set by env(1), not given to `ip`, and the
                    // daemon is exec'd by a second env that already runs with libfaketime
                    // (as GateRun does: straight from a parent without it, a Swift binary
                    // loses its arguments).
                    let clockWords = (clock?.environment ?? [:]).sorted { $0.key < $1.key }.map {
                        "\($0.key)=\($0.value)"
                    }
                    let run = try net.exec(
                        in: net.devices[index],
                        ["/usr/bin/env"] + clockWords + ["/usr/bin/env", GateRun.binary, "run", "--config", config])
                    gateways.append(
                        try SpawnedServer(
                            run.path, run.arguments, logFile: scratch.path("gate-\(index).log"),
                            readyWhenLogContains: "event=listening"))
                    configs.append(config)
                }
                self.gateways = gateways
                self.configs = configs
            } catch {
                net.remove()
                throw error
            }
            for gateway in gateways {
                let ready = waitUntil(timeout: .seconds(15)) {
                    gateway.log.contains("event=shared_store state=connected") && gateway.log.contains("service=web")
                }
                #expect(ready, "\(gateway.log)")
            }
        }

        /// Everything gone: the daemons, the server, the namespaces.
        func stop() {
            for gateway in gateways { gateway.kill() }
            upstream.kill()
            server.stop()
            net.remove()
        }

        /// The phone asks gateway `index` for `name`.
        func dig(_ index: Int, _ name: String) throws -> DigAnswer {
            let words = try net.exec(
                in: phoneNamespace, ["dig", "@\(Self.gatewayAddresses[index])", name, "A", "+tries=1", "+time=2"])
            return DigAnswer(output: try Program.run(words.path, words.arguments).stdout)
        }

        /// The laptop asks gateway `index`'s page for `path`.
        func page(_ index: Int, _ path: String, _ options: [String] = []) throws -> CurlResult {
            let prefix = try net.exec(in: laptopNamespace, [])
            return try Curl.run(
                ["-k"] + options + ["https://\(Self.gatewayAddresses[index]):8443\(path)"],
                prefix: [prefix.path] + prefix.arguments)
        }

        /// The laptop asks for `path` on the page by its name, which resolves to gateway `index`.
        func named(_ index: Int, _ path: String, _ options: [String] = []) throws -> CurlResult {
            let prefix = try net.exec(in: laptopNamespace, [])
            return try Curl.run(
                ["-k", "--resolve", "\(Self.pageName):8443:\(Self.gatewayAddresses[index])"] + options
                    + ["https://\(Self.pageName):8443\(path)"],
                prefix: [prefix.path] + prefix.arguments)
        }

        /// The parent logs in on gateway `index`'s page from the laptop (by the page's name
        /// when `named`), with `password`; the cookie jar (`jar`) and the CSRF token.
        func login(
            _ index: Int, named: Bool = false, jar: String? = nil,
            password: String = ParentPageIntegrationTests.password
        ) throws -> (jar: String, csrf: String) {
            let jar = jar ?? scratch.path("jar-\(index)")
            let options = ["-c", jar, "-H", "Content-Type: application/json", "-d", #"{"password": "\#(password)"}"#]
            let result = try named ? self.named(index, "/api/login", options) : page(index, "/api/login", options)
            #expect(result.status == 200, "\(result)")
            return (jar, try #require(TestJSON.parse(result.body)["csrf_token"]?.string))
        }

        func post(
            _ index: Int, _ path: String, _ body: String = "{}", session: (jar: String, csrf: String)
        ) throws
            -> CurlResult
        {
            try page(
                index, path,
                [
                    "-b", session.jar, "-H", "Content-Type: application/json", "-H", "X-CSRF-Token: \(session.csrf)",
                    "-d", body,
                ])
        }

        /// The phone opens gateway `index`'s child page at `path`.
        func childPage(_ index: Int, _ path: String, _ options: [String] = []) throws -> CurlResult {
            let prefix = try net.exec(in: phoneNamespace, [])
            return try Curl.run(
                ["--resolve", "gate.home.arpa:80:\(Self.gatewayAddresses[index])"] + options
                    + ["http://gate.home.arpa\(path)"],
                prefix: [prefix.path] + prefix.arguments)
        }

        /// The TikTok minutes gateway `index`'s API says the default profile used today.
        func tiktokMinutes(_ index: Int, jar: String) -> Int? {
            guard let body = try? page(index, "/api/profiles", ["-b", jar]).body,
                let card = try? TestJSON.parse(body)["profiles"]?.array?.first
            else { return nil }
            return card["budgets"]?.array?.first { $0["app"]?.string == "tiktok" }?["used_minutes"]?.int
        }

        var logs: String { gateways.map(\.log).joined(separator: "\n----\n") }
    }

    /// What a family with two gateways counts on, on one LAN: TikTok asked of both over
    /// three minutes spends three minutes, and the budget runs out on both at once; a pause
    /// set on A's page blocks the phone's next query to B within a second; a device named on
    /// A's page is named on B's; a question asked on A and answered on B's page is answered
    /// on both; and either page shows the child's whole day.
    @Test func aPhoneUsingBothGatewaysIsOneChildToBoth() throws {
        try #require(PostgresServer.isInstalled, "postgresql")
        try #require(FakeWallClock.isInstalled, "libfaketime (Debian faketime)")
        let clockScratch = try ScratchDirectory("pg-two-lan-clock")
        // 2026-12-07 10:00:05 UTC on both gateways.
        let start: Int64 = 1_796_637_605
        let clock = try FakeWallClock(clockScratch, at: start)
        let policy = PolicyDocuments.json(
            blocked: ["reddit.com"],
            screenTime: #""per_app_limits": [{"bundle_id": "com.zhiliaoapp.musically", "daily_minutes": 5}]"#)
        let lan = try LAN(policy: policy, clock: clock)
        defer { lan.stop() }
        let sessions = [try lan.login(0), try lan.login(1)]

        // TikTok through both gateways in each of three minutes: three minutes.
        for minute in 0..<3 {
            clock.set(start + Int64(minute) * 60)
            for gateway in 0..<2 { #expect(try lan.dig(gateway, "www.tiktok.com").answerData == [LAN.tiktok]) }
        }
        func used() -> [Int?] {
            [lan.tiktokMinutes(0, jar: sessions[0].jar), lan.tiktokMinutes(1, jar: sessions[1].jar)]
        }
        #expect(waitUntil(timeout: .seconds(5)) { used() == [3, 3] }, "\(used())\n\(lan.logs)")
        #expect(try lan.server.rows("SELECT count(*) FROM usage_minutes WHERE service = 'tiktok'") == [["3"]])
        // A fourth minute through A, a fifth through B: the five-minute budget is spent on both.
        clock.set(start + 3 * 60)
        #expect(try lan.dig(0, "www.tiktok.com").answerData == [LAN.tiktok])
        clock.set(start + 4 * 60)
        #expect(try lan.dig(1, "www.tiktok.com").answerData == [LAN.tiktok])
        #expect(waitUntil(timeout: .seconds(5)) { used() == [5, 5] }, "\(used())")
        clock.set(start + 5 * 60)
        for gateway in 0..<2 {
            #expect(try lan.dig(gateway, "www.tiktok.com").extendedErrors == ["15 (Blocked): (limit:tiktok)"])
        }

        // A pause on A's page; the phone's next queries to B, until one is blocked.
        #expect(try lan.dig(1, "example.com").answerData == [LAN.example])
        let paused = try lan.post(0, "/api/profiles/default/pause", #"{"minutes": 15}"#, session: sessions[0])
        #expect(paused.status == 200, "\(paused)")
        let setAt = ContinuousClock.now
        var answer = try lan.dig(1, "example.com")
        _ = waitUntil(timeout: .seconds(5), interval: 10_000_000) {
            answer = (try? lan.dig(1, "example.com")) ?? answer
            return answer.extendedErrors == ["15 (Blocked): (paused)"]
        }
        let took = ContinuousClock.now - setAt
        #expect(answer.extendedErrors == ["15 (Blocked): (paused)"], "\(answer)\n\(lan.logs)")
        #expect(took < .seconds(1), "the pause reached gateway B after \(took)")
        // Resumed on B: A answers again.
        #expect(try lan.post(1, "/api/profiles/default/resume", session: sessions[1]).status == 200)
        let resumed = waitUntil(timeout: .seconds(5)) {
            (try? lan.dig(0, "example.com").answerData) == [LAN.example]
        }
        #expect(resumed, "\(lan.logs)")

        // The phone, which both have seen, named on A's page: B's page shows the name.
        let named = try lan.post(
            0, "/api/devices/\(LAN.phone.mac)", #"{"name": "<i>Mia's phone</i>"}"#, session: sessions[0])
        #expect(named.status == 200, "\(named)")
        var listed = ""
        let shown = waitUntil(timeout: .seconds(5)) {
            listed = (try? lan.page(1, "/api/devices", ["-b", sessions[1].jar]).body) ?? ""
            let devices = (try? TestJSON.parse(listed)["devices"]?.array) ?? []
            return devices.contains {
                $0["mac"]?.string == LAN.phone.mac && $0["name"]?.string == "<i>Mia's phone</i>"
            }
        }
        #expect(shown, "\(listed)")
        let devicesPage = try lan.page(1, "/devices", ["-b", sessions[1].jar]).body
        #expect(devicesPage.contains("&lt;i&gt;Mia&#39;s phone&lt;/i&gt;") && !devicesPage.contains("<i>Mia"))

        // The phone asks through A's child page; the parent answers on B's page.
        for gateway in 0..<2 {
            #expect(
                try lan.dig(gateway, "www.reddit.com").extendedErrors.first?.hasPrefix("15 (Blocked)") == true)
        }
        let asked = try lan.childPage(
            0, "/ask",
            [
                "--data-urlencode", "kind=site", "--data-urlencode", "name=www.reddit.com",
                "--data-urlencode", "note=<b>homework</b>",
            ])
        #expect(asked.status == 303, "\(asked)")
        var requests: [TestJSON] = []
        let arrived = waitUntil(timeout: .seconds(5)) {
            let body = (try? lan.page(1, "/api/requests", ["-b", sessions[1].jar]).body) ?? ""
            requests = (try? TestJSON.parse(body)["requests"]?.array) ?? []
            return !requests.isEmpty
        }
        #expect(arrived, "\(lan.logs)")
        let request = try #require(requests.first)
        #expect(request["note"]?.string == "<b>homework</b>", "\(request)")
        let id = try #require(request["id"]?.int)
        let answered = try lan.post(
            1, "/api/requests/\(id)", #"{"answer": "allow", "minutes": 15}"#, session: sessions[1])
        #expect(answered.status == 200, "\(answered)")
        var childPage = ""
        let yes = waitUntil(timeout: .seconds(5)) {
            childPage = (try? lan.childPage(0, "/").body) ?? ""
            return childPage.contains("Yes, for 15 minutes.")
        }
        #expect(yes, "\(childPage)\n\(lan.logs)")
        #expect(childPage.contains("&lt;b&gt;homework&lt;/b&gt;") && !childPage.contains("<b>homework"))
        for gateway in 0..<2 { #expect(try lan.dig(gateway, "www.reddit.com").answerData == [LAN.reddit]) }

        // The child's day is whole on both pages: the block asked of each gateway is one row
        // counted twice, and today's counts are the same on both.
        func day(_ gateway: Int) -> (hits: [TestJSON], today: TestJSON?) {
            let jar = sessions[gateway].jar
            let hits =
                (try? lan.page(gateway, "/api/profiles/default/hits?name=reddit.com", ["-b", jar]).body)
                .flatMap { try? TestJSON.parse($0)["hits"]?.array } ?? []
            let cards =
                (try? lan.page(gateway, "/api/profiles", ["-b", jar]).body)
                .flatMap { try? TestJSON.parse($0)["profiles"]?.array } ?? []
            return (hits, cards.first?["today"])
        }
        var days = [day(0), day(1)]
        let whole = waitUntil(timeout: .seconds(20)) {
            days = [day(0), day(1)]
            return days.allSatisfy { $0.hits.map { $0["count"]?.int } == [2] }
                && days[0].today?["queries"]?.int == days[1].today?["queries"]?.int
                && days[0].today?["blocks"]?.int == days[1].today?["blocks"]?.int
        }
        #expect(whole, "\(days)\n\(lan.logs)")
        #expect(days[0].hits.first?["name"]?.string == "www.reddit.com")
        #expect((days[0].today?["blocks"]?.int ?? 0) >= 6, "\(days)")

        // The laptop asks A only: B's Devices page lists it too.
        let laptopDig = try lan.net.exec(
            in: lan.laptopNamespace, ["dig", "@\(LAN.gatewayAddresses[0])", "example.com", "A", "+tries=1", "+time=2"])
        _ = try Program.run(laptopDig.path, laptopDig.arguments)
        var listedOnB = ""
        let laptop = waitUntil(timeout: .seconds(20)) {
            listedOnB = (try? lan.page(1, "/api/devices", ["-b", sessions[1].jar]).body) ?? ""
            let devices = (try? TestJSON.parse(listedOnB)["devices"]?.array) ?? []
            return devices.contains { $0["addresses"]?.array?.contains { $0.string == LAN.laptop } == true }
        }
        #expect(laptop, "\(listedOnB)")
    }

    /// The parent's page is one page on two gateways: the password set on A's is B's too; a
    /// login through the page's name, which resolves to A, holds when it resolves to B; a
    /// logout on B ends it on A; a new password set on B is A's too, and the sessions of
    /// the old one end on both.
    @Test func theParentLogsInOnceForBothGateways() throws {
        try #require(PostgresServer.isInstalled, "postgresql")
        let lan = try LAN(policy: PolicyDocuments.json(blocked: ["reddit.com"]), clock: nil)
        defer { lan.stop() }
        func passwordFile(_ index: Int) -> String? {
            try? String(contentsOfFile: lan.scratch.path("state-\(index)/web-password"), encoding: .utf8)
        }
        #expect(passwordFile(1) != nil && passwordFile(1) == passwordFile(0), "B serves with A's password")
        #expect(lan.gateways[1].log.contains("event=web_password state=set_from_shared_store"))

        let jar = lan.scratch.path("jar-named")
        let session = try lan.login(0, named: true, jar: jar)
        func status(_ index: Int) -> Int { (try? lan.named(index, "/api/profiles", ["-b", jar]).status) ?? 0 }
        #expect(status(0) == 200)
        #expect(waitUntil(timeout: .seconds(5)) { status(1) == 200 }, "the session opened on A opens B: \(status(1))")

        // Logged out through B: A no longer knows the session.
        let out = try lan.named(
            1, "/api/logout",
            ["-b", jar, "-H", "X-CSRF-Token: \(session.csrf)", "-H", "Content-Type: application/json", "-d", "{}"])
        #expect(out.status == 200, "\(out)")
        #expect(waitUntil(timeout: .seconds(5)) { status(0) == 401 }, "the logout on B ends A's: \(status(0))")

        // A new password set on B: A's page takes it, and the session opened with the old one ends on both.
        _ = try lan.login(0, named: true, jar: jar)
        #expect(waitUntil(timeout: .seconds(5)) { status(1) == 200 })
        let newPassword = "another battery staple"
        let set = try GateCommand.run(["web-password", "--config", lan.configs[1]], stdin: newPassword + "\n")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(
            waitUntil(timeout: .seconds(20)) { passwordFile(0) == passwordFile(1) },
            "the password set on B reaches A\n\(lan.logs)")
        // Each page reads the file again on its own turn: the sessions end once both have.
        #expect(
            waitUntil(timeout: .seconds(5)) { status(0) == 401 && status(1) == 401 }, "sessions of the old password end"
        )
        _ = try lan.login(0, password: newPassword)
        let old = try lan.page(
            0, "/api/login",
            ["-H", "Content-Type: application/json", "-d", #"{"password": "\#(ParentPageIntegrationTests.password)"}"#])
        #expect(old.status == 401, "\(old)")
    }
}
