import Foundation
import Glibc
import TestSupport
import Testing

/// The parent's page in a real browser (headless Chromium under Selenium) against the real
/// daemon: the parent logs in and clicks; `dig` from the child's address and a tunnel
/// through the proxy show the gateway enforcing each click. Screenshots at phone and
/// desktop width go to `.build/test-artifacts/` (and to `docs/images/` for the README with
/// `PHOSRA_GATE_SCREENSHOTS=1`).
@Suite(.serialized, .blocking) struct ParentPageBrowserTests {
    typealias Page = ParentPageIntegrationTests.Page

    /// `kid` at 127.0.0.2 with `kidPolicy`; everyone else `home` (reddit.com blocked). dnsmasq answers `origin.test` and `www.reddit.com` with 127.0.0.1; the
    /// proxy is on, with CONNECT to `tunnelPort` allowed to loopback.
    static func page(
        dns: DnsmasqUpstream, kidPolicy: String, proxyPort: UInt16? = nil, tunnelPort: UInt16 = 1,
        environment: [String: String] = [:]
    ) throws -> Page {
        let scratch = try ScratchDirectory("pg-browser-policies")
        let kid = try scratch.write("kid.json", kidPolicy)
        let home = try scratch.write("home.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        // The names answer with loopback, which answers and the proxy keep only with this.
        var arguments = ["--allow-local-destinations"]
        if let proxyPort {
            arguments += ["--proxy-listen", "127.0.0.1:\(proxyPort)", "--connect-ports", "\(tunnelPort)"]
        }
        return try Page(
            upstream: dns.spec,
            settings: """
                default_profile = home
                [profile home]
                policy = \(home)
                [profile kid]
                clients = 127.0.0.2
                policy = \(kid)
                """, arguments: arguments, environment: environment)
    }

    static func upstream() throws -> DnsmasqUpstream {
        try DnsmasqUpstream([
            "--host-record=origin.test,127.0.0.1", "--host-record=www.reddit.com,127.0.0.1",
            "--host-record=old.reddit.com,127.0.0.1",
        ])
    }

    func logIn(_ browser: PageBrowser, _ page: Page) throws {
        try browser.get(page.base + "/")
        #expect(try browser.url().hasSuffix("/login"), "the page asks for the password first")
        try browser.fill("input[name=password]", "wrong password")
        try browser.click("button", text: "Log in")
        let refused = try browser.source()
        #expect(refused.contains("<p class=\"error\">Wrong password.</p>"), "\(refused)")
        try browser.fill("input[name=password]", ParentPageIntegrationTests.password)
        try browser.click("button", text: "Log in")
        let home = try browser.url()
        #expect(home == page.base + "/", "\((try? browser.source()) ?? "")")
    }

    func fromKid(_ page: Page, _ name: String) throws -> DigAnswer {
        try page.gate.dig(name, "A", ["-b", "127.0.0.2"])
    }

    @Test func pauseBlocksTheChildWithinASecondAndClosesItsTunnelThenResume() throws {
        let dns = try Self.upstream()
        let origin = try HeldOrigin()
        let proxyPort = FreePort.tcpAndUDP()
        let page = try Self.page(
            dns: dns,
            kidPolicy: PolicyDocuments.json(blocked: ["games.example"], screenTime: #""daily_limit_minutes": 120"#),
            proxyPort: proxyPort, tunnelPort: origin.port)
        defer { page.gate.daemon.stop() }
        #expect(page.gate.daemon.waitFor("service=proxy", timeout: 10), "\(page.gate.log)")
        let browser = try PageBrowser(scratch: page.scratch)
        defer { browser.close() }
        try logIn(browser, page)
        #expect(try fromKid(page, "origin.test").answerData == ["127.0.0.1"])
        let tunnel = try Tunnel(from: "127.0.0.2", proxyPort: proxyPort, to: "origin.test:\(origin.port)")
        #expect(try tunnel.echoes("before the pause"))

        try browser.click(button: "Pause 1 h", within: "section.card[data-profile='kid']", containing: "")
        let clicked = Date()
        #expect(try browser.text("section.card[data-profile='kid'] p.state").hasPrefix("paused until"))
        let paused = try fromKid(page, "origin.test")
        #expect(paused.extendedErrors == ["15 (Blocked): (paused)"], "\(paused)")
        #expect(Date().timeIntervalSince(clicked) < 1, "dig answered paused within a second of the click")
        let closed = tunnel.waitForEnd(seconds: 3)
        #expect(closed != nil, "the open tunnel of the paused child was closed")
        if let closed {
            #expect(closed.timeIntervalSince(clicked) < 1.5, "closed \(closed.timeIntervalSince(clicked)) s after")
        }
        // Another profile is not paused.
        #expect(try page.gate.dig("origin.test").answerData == ["127.0.0.1"])
        try browser.screenshot("parent-page-home-phone.png", width: 360)
        try browser.screenshot("parent-page-home-desktop.png", width: 1280)

        try browser.click(button: "Resume", within: "section.card[data-profile='kid']", containing: "")
        #expect(try browser.text("section.card[data-profile='kid'] p.state") == "allowed")
        #expect(try fromKid(page, "origin.test").answerData == ["127.0.0.1"])
        // The daily limit on the card: the kid's minutes online of its lookups (one, or two
        // when the test crossed a minute); "+30 min" adds thirty minutes to today's limit.
        let daily = try browser.text("section.card[data-profile='kid'] p.daily")
        let used = ["1", "2"].first { daily.hasPrefix("Online today: \($0) of 120 min") }
        #expect(used != nil, "\(daily)")
        try browser.click(button: "+30 min", within: "section.card[data-profile='kid']", containing: "")
        // The limit is what "+30 min" changes; the minutes may have grown by one since,
        // when a minute of the kid's began in between.
        let more = try browser.text("section.card[data-profile='kid'] p.daily")
        let grown = ["1", "2", "3"].filter { Int($0)! >= Int(used ?? "9")! }
        #expect(grown.contains { more.hasPrefix("Online today: \($0) of 150 min") }, "\(more)")
        #expect(
            try browser.text("section.card[data-profile='kid'] ul.overrides").contains("+30 min of the daily limit"))
    }

    @Test func thirtyMoreMinutesInsideDowntime() throws {
        let dns = try Self.upstream()
        let page = try Self.page(
            dns: dns, kidPolicy: PolicyDocuments.json(screenTime: PolicyDocuments.downtime("11:00", "13:00")),
            environment: GateRun.wallClock(PolicyDocuments.noon))
        defer { page.gate.daemon.stop() }
        let browser = try PageBrowser(scratch: page.scratch)
        defer { browser.close() }
        try logIn(browser, page)
        #expect(try fromKid(page, "origin.test").extendedErrors == ["15 (Blocked): (downtime)"])
        #expect(try browser.text("section.card[data-profile='kid'] p.state").hasPrefix("downtime until 13:00"))

        try browser.click(button: "+30 min", within: "section.card[data-profile='kid']", containing: "")
        #expect(try browser.text("section.card[data-profile='kid'] p.state").hasPrefix("extended until 12:30"))
        #expect(try fromKid(page, "origin.test").answerData == ["127.0.0.1"], "downtime lifted for 30 minutes")
        // The override is listed with who set it, and removable: removing it ends the extension.
        let card = try browser.text("section.card[data-profile='kid'] ul.overrides")
        #expect(card.contains("extension until 12:30") && card.contains("by page 127.0.0.1"), "\(card)")
        try browser.click(button: "Remove", within: "section.card[data-profile='kid']", containing: "extension")
        #expect(try fromKid(page, "origin.test").extendedErrors == ["15 (Blocked): (downtime)"])
    }

    @Test func aBlockedNameAllowedForOneMinuteIsBlockedAgainAfter() throws {
        let dns = try Self.upstream()
        let page = try Self.page(dns: dns, kidPolicy: PolicyDocuments.json(blocked: ["reddit.com"]))
        defer { page.gate.daemon.stop() }
        let browser = try PageBrowser(scratch: page.scratch)
        defer { browser.close() }
        try logIn(browser, page)
        let blocked = ["15 (Blocked): (blocked_domain:reddit.com)"]
        #expect(try fromKid(page, "www.reddit.com").extendedErrors == blocked)
        for name in ["origin.test", "old.reddit.com", "origin.test", "www.reddit.com"] { _ = try fromKid(page, name) }
        // The child's day lists the block once the hits are flushed to the store (every 5 s).
        try browser.get(page.base + "/profiles/kid")
        let listed = try waitUntil(timeout: 15_000_000_000, interval: 500_000_000) {
            try browser.get(page.base + "/profiles/kid")
            return try browser.source().contains("www.reddit.com")
        }
        #expect(listed, "the block shows on the child's day")
        try browser.screenshot("parent-page-day-phone.png", width: 360)
        try browser.screenshot("parent-page-day-desktop.png", width: 1280)

        try browser.fill("form.allow input[name=name]", "reddit.com")
        try browser.fill("form.allow input[name=minutes]", "1")
        try browser.click("form.allow button")
        let allowedAt = Date()
        #expect(try fromKid(page, "www.reddit.com").answerData == ["127.0.0.1"], "allowed from the next query")
        #expect(try fromKid(page, "old.reddit.com").answerData == ["127.0.0.1"], "and its subdomains")
        let again = try waitFor(timeout: 75_000_000_000, interval: 1_000_000_000) { () throws -> Date? in
            try fromKid(page, "www.reddit.com").extendedErrors == blocked ? Date() : nil
        }
        let after = try #require(again, "blocked again once the minute ended")
        #expect(after.timeIntervalSince(allowedAt) >= 55, "not before the minute was over")
    }
}

/// A TCP origin on loopback that echoes what it reads and keeps every connection open
/// until the peer ends it: a tunnel to it ends only when the gateway ends it.
final class HeldOrigin: @unchecked Sendable {
    // Sendable: `listener` and `port` are set once; the accept thread owns the rest.
    let port: UInt16
    private let listener: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            throw PageBrowser.Failure(description: "origin: errno \(errno)")
        }
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &size) }
        }
        listener = descriptor
        port = UInt16(bigEndian: address.sin_port)
        Thread {
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                Thread {
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    while true {
                        let count = read(connection, &buffer, buffer.count)
                        guard count > 0, write(connection, buffer, count) == count else { break }
                    }
                    Glibc.close(connection)
                }.start()
            }
        }.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }
}

/// A CONNECT tunnel through the proxy from a chosen loopback source.
final class Tunnel {
    private let descriptor: Int32

    init(from source: String, proxyPort: UInt16, to target: String) throws {
        guard let connected = LoopbackSocketFactory.connect(tcp: true, from: source, to: proxyPort, timeout: 10) else {
            throw PageBrowser.Failure(description: "cannot reach the proxy: errno \(errno)")
        }
        descriptor = connected
        try send("CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n")
        let head = try receive(until: "\r\n\r\n")
        guard head.hasPrefix("HTTP/1.1 200") else { throw PageBrowser.Failure(description: "CONNECT answered \(head)") }
    }

    deinit { Glibc.close(descriptor) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else {
            throw PageBrowser.Failure(description: "tunnel write: errno \(errno)")
        }
    }

    func receive(until end: String, seconds: Int32 = 5) throws -> String {
        var received: [UInt8] = []
        while !String(decoding: received, as: UTF8.self).contains(end) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, seconds * 1000) > 0 else {
                throw PageBrowser.Failure(description: "tunnel: no answer")
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(descriptor, &chunk, chunk.count)
            guard count > 0 else { throw PageBrowser.Failure(description: "tunnel ended") }
            received += chunk[..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Whether a line sent through the tunnel comes back from the echoing origin.
    func echoes(_ line: String) throws -> Bool {
        try send(line + "\n")
        return try receive(until: "\n").contains(line)
    }

    /// When the gateway ended the tunnel (end of stream or a reset), or nil if it is still
    /// open after `seconds`.
    func waitForEnd(seconds: Double) -> Date? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while deadline.timeIntervalSinceNow > 0 {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(deadline.timeIntervalSinceNow * 1000) + 1) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            if read(descriptor, &chunk, chunk.count) <= 0 { return Date() }
        }
        return nil
    }
}

/// The page on a LAN built in network namespaces: the gateway behind a bridge, a device
/// with its own MAC address, the browser on the gateway's side. The Devices page shows
/// the device under the name it gave the DHCP server, marked new; the parent names it and
/// assigns it to a child; its next query is the child's.
@Suite(.serialized, .blocking) struct ParentPageLANBrowserTests {
    static let mac = "02:00:5e:10:00:0a"

    @Test func aDeviceAssignedByMACIsDecidedByItsNewProfile() throws {
        let lan = try NetworkNamespaces.make(devices: 1)
        defer { lan.remove() }
        try lan.bridgedLAN(gateway: "198.51.100.1/24", devices: [("198.51.100.10/24", Self.mac)])

        let scratch = try ScratchDirectory("pg-page-lan")
        let dnsmasq = try lan.upstreamDnsmasq(
            records: ["www.reddit.com,198.51.100.21"], logFile: scratch.path("dnsmasq.log"))
        defer { dnsmasq.kill() }
        let home = try scratch.write("home.json", PolicyDocuments.json())
        let kid = try scratch.write("kid.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        // dnsmasq's lease file: expiry, MAC, address, host name, client id. The host name is
        // the device's own choice, so markup in it must come out as text.
        let leases = try scratch.write(
            "dnsmasq.leases", "4102444800 \(Self.mac) 198.51.100.10 Mia<b>s-Tablet 01:\(Self.mac)\n")
        let config = try scratch.write(
            "gate.conf",
            """
            dns_listen = 198.51.100.1:53
            upstream = 127.0.0.1:5399
            state_dir = \(scratch.path("state"))
            timezone = UTC
            proxy_listen =
            allow_clients = 198.51.100.0/24
            web_listen = 198.51.100.1:8443
            web_http_listen = 198.51.100.1:8080
            dhcp_leases = \(leases)
            default_profile = home
            [profile home]
            policy = \(home)
            [profile kid]
            policy = \(kid)
            """)
        let set = try GateCommand.run(
            ["web-password", "--config", config], stdin: ParentPageIntegrationTests.password + "\n")
        #expect(set.status == 0, "\(set.stderr)")
        let run = try lan.exec(in: lan.gateway, [GateRun.binary, "run", "--config", config])
        let gate = try SpawnedServer(
            run.path, run.arguments, logFile: scratch.path("gate.log"), readyWhenLogContains: "service=web")
        defer { gate.kill() }

        func ask(_ name: String) throws -> DigAnswer {
            let dig = try lan.exec(in: lan.device, ["dig", "@198.51.100.1", name, "A", "+tries=3", "+time=2"])
            return DigAnswer(
                output: try SpawnedServer.run([dig.path] + dig.arguments, logFile: scratch.path("dig.out")).output)
        }
        #expect(try ask("www.reddit.com").answerData == ["198.51.100.21"], "home: not blocked")

        let browser = try PageBrowser(scratch: scratch, prefix: try lan.exec(in: lan.gateway, []))
        defer { browser.close() }
        let base = "https://198.51.100.1:8443"
        let ready = try waitUntil(timeout: 10_000_000_000, interval: 200_000_000) {
            try browser.get(base + "/login")
            return try browser.source().contains("type=\"password\"")
        }
        #expect(ready, "the login page: \(gate.log)")
        try browser.fill("input[name=password]", ParentPageIntegrationTests.password)
        try browser.click("button", text: "Log in")
        // The device shows up by its MAC once its sighting is flushed (every 5 s).
        let form = "form[action='/devices/\(Self.mac.replacingOccurrences(of: ":", with: "%3A"))']"
        let listed = try waitUntil(timeout: 20_000_000_000, interval: 500_000_000) {
            try browser.get(base + "/devices")
            return try browser.source().contains(Self.mac)
        }
        #expect(listed, "the device is listed by its MAC: \(gate.log)")
        // The DHCP server's name for it, shown as text, and the device marked new.
        #expect(try browser.text("table").contains("Mia<b>s-Tablet"))
        let listing = try browser.source()
        #expect(listing.contains("Mia&lt;b&gt;s-Tablet") && !listing.contains("Mia<b>"), "\(listing)")
        #expect(try browser.text(".new").lowercased().contains("new"))
        try browser.fill(form + " input[name=name]", "Tablet")
        try browser.select(form + " select[name=profile]", value: "kid")
        try browser.click(form + " button")
        let saved = try browser.source()
        #expect(saved.contains("Tablet"), "\(saved)")
        try browser.screenshot("parent-page-devices-phone.png", width: 360)
        try browser.screenshot("parent-page-devices-desktop.png", width: 1280)

        let answer = try ask("www.reddit.com")
        #expect(answer.extendedErrors == ["15 (Blocked): (blocked_domain:reddit.com)"], "kid's now: \(answer)")
        #expect(gate.log.contains("event=device_saved mac=\(Self.mac)"), "\(gate.log)")
    }
}
