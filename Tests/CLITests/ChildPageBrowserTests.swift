import Foundation
import TestSupport
import Testing

/// The child's side in a browser on a LAN built in network namespaces
/// (docs/requests-and-notifications.md): the child's Chromium, in its own namespace behind
/// the gateway's proxy, opens a blocked plain-HTTP page, follows "Ask a parent", asks to
/// open it with a note; the parent's Chromium answers "Allow 15 min" on the home page;
/// the child's next query is allowed and its page shows the answer; fifteen minutes later
/// (the gateway's clock moved by libfaketime) the name is blocked again. Screenshots of
/// both pages.
@Suite(.serialized, .blocking) struct ChildPageBrowserTests {
    static let mac = "02:00:5e:10:00:0b"

    @Test func aChildAsksFromTheBlockPageAndTheParentAllowsFifteenMinutes() throws {
        try #require(FakeWallClock.isInstalled, "libfaketime (Debian faketime)")
        let lan = try NetworkNamespaces.make(devices: 1)
        defer { lan.remove() }
        try lan.bridgedLAN(gateway: "198.51.100.1/24", devices: [("198.51.100.10/24", Self.mac)])
        // The child's device asks the gateway for names, as DHCP would have told it.
        let resolv = "/etc/netns/\(lan.device)"
        try FileManager.default.createDirectory(atPath: resolv, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: resolv) }
        try "nameserver 198.51.100.1\n".write(toFile: resolv + "/resolv.conf", atomically: true, encoding: .utf8)

        let scratch = try ScratchDirectory("pg-child-lan")
        let dnsmasq = try lan.upstreamDnsmasq(
            records: ["www.games.example,198.51.100.21"], logFile: scratch.path("dnsmasq.log"))
        defer { dnsmasq.kill() }
        let home = try scratch.write("home.json", PolicyDocuments.json())
        let kid = try scratch.write("kid.json", PolicyDocuments.json(blocked: ["games.example"]))
        let config = try scratch.write(
            "gate.conf",
            """
            dns_listen = 198.51.100.1:53
            upstream = 127.0.0.1:5399
            state_dir = \(scratch.path("state"))
            timezone = UTC
            proxy_listen = 198.51.100.1:3128
            allow_clients = 198.51.100.0/24
            web_listen = 198.51.100.1:8443
            web_http_listen = 198.51.100.1:8080
            child_listen = 198.51.100.1:80
            default_profile = home
            [profile home]
            policy = \(home)
            [profile kid]
            policy = \(kid)
            clients = \(Self.mac)
            """)
        let set = try GateCommand.run(
            ["web-password", "--config", config], stdin: ParentPageIntegrationTests.password + "\n")
        #expect(set.status == 0, "\(set.stderr)")
        let start: Int64 = 1_796_581_800
        let clock = try FakeWallClock(scratch, at: start)
        let run = try lan.exec(
            in: lan.gateway,
            // env(1) twice: a Swift binary exec'd with libfaketime preloaded straight from a
            // parent without it loses its arguments (as `GateRun` says).
            ["/usr/bin/env"] + clock.environment.map { "\($0.key)=\($0.value)" } + [
                "/usr/bin/env", GateRun.binary, "run", "--config", config,
            ])
        let gate: SpawnedServer
        do {
            gate = try SpawnedServer(
                run.path, run.arguments, logFile: scratch.path("gate.log"), readyWhenLogContains: "service=web")
        } catch {
            let log = (try? String(contentsOfFile: scratch.path("gate.log"), encoding: .utf8)) ?? ""
            Issue.record("the gateway did not start: \(error)\n\(log)")
            throw error
        }
        defer { gate.kill() }
        func ask(_ name: String) throws -> DigAnswer {
            let dig = try lan.exec(in: lan.device, ["dig", "@198.51.100.1", name, "A", "+tries=3", "+time=2"])
            return DigAnswer(
                output: try SpawnedServer.run([dig.path] + dig.arguments, logFile: scratch.path("dig.out")).output)
        }
        let blocked = ["15 (Blocked): (blocked_domain:games.example)"]
        #expect(try ask("www.games.example").extendedErrors == blocked, "the kid's device, by its MAC")
        #expect(try ask("gate.home.arpa").answerData == ["198.51.100.1"])

        // The child's browser: the gateway's proxy for the web, the gateway itself directly.
        let child = try PageBrowser(
            scratch: scratch, prefix: try lan.exec(in: lan.device, []),
            chromiumFlags: [
                "--proxy-server=http://198.51.100.1:3128", "--proxy-bypass-list=gate.home.arpa",
                // A plain-HTTP site stays plain: the block page is what is looked at.
                "--disable-features=HttpsUpgrades",
            ])
        defer { child.close() }
        try child.get("http://www.games.example/")
        #expect(try child.text("p.reason") == "A parent has blocked this site.", "\((try? child.source()) ?? "")")
        try child.click("a", text: "Ask a parent")
        #expect(try child.url().hasPrefix("http://gate.home.arpa/ask?kind=site&name=www.games.example"))
        try child.fill("form.ask-site input[name=note]", "<b>homework</b> please")
        try child.click("form.ask-site button")
        let waiting = try child.text("section.requests")
        #expect(waiting.contains("Open www.games.example — “<b>homework</b> please”"), "\(waiting)")
        #expect(waiting.contains("Waiting for an answer."))

        // The parent's browser, on the gateway's side: the question on top, answered in one tap.
        let parent = try PageBrowser(scratch: scratch, prefix: try lan.exec(in: lan.gateway, []))
        defer { parent.close() }
        let base = "https://198.51.100.1:8443"
        try parent.get(base + "/login")
        try parent.fill("input[name=password]", ParentPageIntegrationTests.password)
        try parent.click("button", text: "Log in")
        let question = try parent.text("section.requests")
        #expect(question.contains("kid: open www.games.example — “<b>homework</b> please”"), "\(question)")
        #expect(!(try parent.source()).contains("<b>homework"), "the note is text, not markup")
        try parent.screenshot("parent-page-request-phone.png", width: 360)
        try parent.click(button: "Allow 15 min", within: "section.requests li", containing: "www.games.example")
        #expect(try parent.text("section.card[data-profile='kid'] ul.overrides").contains("allow www.games.example"))

        #expect(try ask("www.games.example").answerData == ["198.51.100.21"], "allowed from the next query")
        try child.get("http://gate.home.arpa/")
        #expect(try child.text("section.requests").contains("Yes, for 15 minutes."))
        #expect(!(try child.source()).contains("Pause"), "no parent control on the child's page")
        try child.screenshot("child-page-phone.png", width: 360)
        try child.screenshot("child-page-desktop.png", width: 1280)

        // Fifteen minutes later, blocked again.
        clock.set(start + 16 * 60)
        #expect(try ask("www.games.example").extendedErrors == blocked, "\(gate.log)")
    }
}
