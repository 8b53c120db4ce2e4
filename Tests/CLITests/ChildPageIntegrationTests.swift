import Foundation
import TestSupport
import Testing

/// The child's side on the real binary (docs/requests-and-notifications.md), its wall clock
/// set by the test (libfaketime), driven by `curl` and `dig` from a child's address: the
/// home name answers with the child's page's address, a blocked plain-HTTP page links to
/// the question, the child asks with a note, the parent answers "allow for 15 min" through
/// the API, the next query is allowed and the child's page says so, and after the 15
/// minutes the name is blocked again.
@Suite(.serialized, .blocking) struct ChildPageIntegrationTests {
    static let child = "127.0.0.2"

    @Test func aChildAsksFromTheBlockPageAndTheParentsAllowLastsFifteenMinutes() throws {
        try #require(FakeWallClock.isInstalled, "libfaketime (Debian faketime)")
        let scratch = try ScratchDirectory("pg-child-clock")
        let clock = try FakeWallClock(scratch, at: 1_796_581_800)
        let dns = try DnsmasqUpstream(["--address=/reddit.com/127.0.0.1", "--address=/example.test/127.0.0.1"])
        let childPort = FreePort.tcpAndUDP()
        let proxyPort = FreePort.tcpAndUDP()
        let page = try ParentPageIntegrationTests.Page(
            policy: PolicyDocuments.json(blocked: ["reddit.com"]), upstream: dns.spec,
            settings: "child_listen = 127.0.0.1:\(childPort)", arguments: ["--allow-local-destinations"],
            environment: clock.environment, proxyPort: proxyPort)
        defer { page.gate.daemon.stop() }
        #expect(page.gate.daemon.waitFor("service=proxy", timeout: 10), "\(page.gate.log)")
        let home = "gate.home.arpa"
        let base = "http://\(home):\(childPort)"
        func fromChild(_ arguments: [String]) throws -> CurlResult {
            try Curl.run(["--interface", Self.child, "--resolve", "\(home):\(childPort):127.0.0.1"] + arguments)
        }
        func dig(_ name: String) throws -> DigAnswer { try page.gate.dig(name, "A", ["-b", Self.child]) }

        // The home name is the gateway's own address, for every device.
        #expect(try dig(home).answerData == ["127.0.0.1"])
        // A blocked plain-HTTP page through the proxy links to the question, filled in.
        let blocked = try Curl.run([
            "--interface", Self.child, "-x", "http://127.0.0.1:\(proxyPort)", "http://www.reddit.com/",
        ])
        #expect(blocked.status == 403, "\(blocked)")
        let link = "\(base)/ask?kind=site&amp;name=www.reddit.com"
        #expect(blocked.body.contains("<a href=\"\(link)\">Ask a parent</a>"), "\(blocked.body)")
        let tunnel = try Curl.run(
            ["--interface", Self.child, "-x", "http://127.0.0.1:\(proxyPort)", "-p", "https://www.reddit.com/"])
        #expect(tunnel.exitCode != 0, "a tunnel to a blocked name is refused")

        // The link opens the child's page with the question ready; the child asks, with a note.
        let form = try fromChild(["\(base)/ask?kind=site&name=www.reddit.com"])
        #expect(form.status == 200 && form.body.contains("value=\"www.reddit.com\""), "\(form)")
        let asked = try fromChild(
            ["-d", "kind=site", "-d", "name=www.reddit.com", "--data-urlencode", "note=<b>homework</b>", "\(base)/ask"])
        #expect(asked.status == 303, "\(asked)")
        let waiting = try fromChild(["\(base)/"])
        #expect(waiting.body.contains("Open www.reddit.com — “&lt;b&gt;homework&lt;/b&gt;”"), "\(waiting.body)")
        #expect(waiting.body.contains("Waiting for an answer."))
        #expect(try fromChild(["-d", "kind=time", "\(base)/ask"]).status == 429, "one question a minute")

        // The parent answers "allow for 15 min": the next query is allowed.
        let session = try page.login()
        let listed = try page.curl("/api/requests", ["-b", session.jar])
        let id = try #require(TestJSON.parse(listed.body)["requests"]?.array?.first?["id"]?.int, "\(listed.body)")
        let answered = try page.post("/api/requests/\(id)", #"{"answer": "allow", "minutes": 15}"#, session: session)
        #expect(answered.status == 200, "\(answered)")
        #expect(try dig("www.reddit.com").answerData == ["127.0.0.1"], "allowed from the next query")
        let shown = try fromChild(["\(base)/"])
        #expect(shown.body.contains("Yes, for 15 minutes."), "\(shown.body)")
        #expect(try page.curl("/api/requests", ["-b", session.jar]).body.contains("\"requests\": []"))

        // Fifteen minutes later it is blocked again.
        clock.set(1_796_581_800 + 16 * 60)
        #expect(try dig("www.reddit.com").extendedErrors == ["15 (Blocked): (blocked_domain:reddit.com)"])

        // Another device's page is its own; the unknown host name is refused.
        let other = try Curl.run([
            "--interface", "127.0.0.3", "--resolve", "\(home):\(childPort):127.0.0.1", "\(base)/",
        ])
        #expect(other.status == 200 && !other.body.contains("homework"), "another device's page has none of it")
        let rebound = try Curl.run(["-H", "Host: evil.example", "http://127.0.0.1:\(childPort)/"])
        #expect(rebound.status == 421)
    }

    /// A device on the proxy with a login reaches its page through the proxy, which says
    /// who asks: the question is its proxy user's profile's. The same claim sent straight
    /// to the page, or through the proxy by the client, is not believed.
    @Test func aProxyUsersPageIsItsProfilesAndAClaimIsNotBelieved() throws {
        let hashed = try GateCommand.run(["passwd"], stdin: "s3cret\n")
        try #require(hashed.status == 0, "\(hashed.stderr)")
        let hash = hashed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let scratch = try ScratchDirectory("pg-child-proxy-user")
        let kidPolicy = try scratch.write("kid.json", PolicyDocuments.json(blocked: ["tiktok.com"]))
        let homePolicy = try scratch.write("home.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        let childPort = FreePort.tcpAndUDP()
        let proxyPort = FreePort.tcpAndUDP()
        let page = try ParentPageIntegrationTests.Page(
            settings: """
                child_listen = 127.0.0.1:\(childPort)
                default_profile = home
                [profile home]
                policy = \(homePolicy)
                [profile kid]
                proxy_user = kid
                proxy_password = \(hash)
                policy = \(kidPolicy)
                """, proxyPort: proxyPort)
        defer { page.gate.daemon.stop() }
        let base = "http://gate.home.arpa:\(childPort)"
        let proxy = "http://kid:s3cret@127.0.0.1:\(proxyPort)"

        let shown = try Curl.run(["--interface", "127.0.0.2", "-x", proxy, "\(base)/"])
        #expect(shown.status == 200 && shown.body.contains("Ask a parent"), "\(shown)")
        let viaProxy = try Curl.run(
            ["--interface", "127.0.0.2", "-x", proxy, "-d", "kind=time", "-d", "note=proxy", "\(base)/ask"])
        #expect(viaProxy.status == 303, "\(viaProxy)")
        let forgedThrough = try Curl.run([
            "--interface", "127.0.0.4", "-x", proxy, "-H", "Phosra-Child-Profile: default", "-H",
            "Phosra-Child-Address: 127.0.0.9", "-d", "kind=time", "-d", "note=through", "\(base)/ask",
        ])
        #expect(forgedThrough.status == 303, "\(forgedThrough)")
        let forgedStraight = try Curl.run([
            "--interface", "127.0.0.3", "--resolve", "gate.home.arpa:\(childPort):127.0.0.1", "-H",
            "Phosra-Child-Profile: kid", "-H", "Phosra-Child-Address: 127.0.0.9", "-d", "kind=time", "-d",
            "note=straight", "\(base)/ask",
        ])
        #expect(forgedStraight.status == 303, "\(forgedStraight)")

        let session = try page.login()
        let listed = try TestJSON.parse(try page.curl("/api/requests", ["-b", session.jar]).body)
        let asked = Dictionary(
            uniqueKeysWithValues: (listed["requests"]?.array ?? []).compactMap { row -> (String, String)? in
                guard let note = row["note"]?.string, let profile = row["profile"]?.string,
                    let device = row["device"]?.string
                else { return nil }
                return (note, "\(profile) \(device)")
            })
        #expect(asked["proxy"] == "kid 127.0.0.2", "\(asked)")
        #expect(asked["through"] == "kid 127.0.0.4", "\(asked)")
        #expect(asked["straight"] == "home 127.0.0.3", "\(asked)")
    }
}
