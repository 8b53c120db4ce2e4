import DomainMatch
import HTTP1
import Passwords
import Policy
import Store
import SystemIO
import TestSupport
import Testing

@testable import ParentPage

/// The child's page and its requests (docs/requests-and-notifications.md), driven as the
/// server drives `ChildApp` and `WebApp`: a real store on a scratch directory, two filtered
/// profiles (mia by MAC, leo by subnet). A device sees only its own profile and can only
/// ask; a sixth waiting request and a second within a minute are refused; notes are
/// escaped on both pages; the parent's one-tap answers become overrides.
@Suite(.blocking) struct ChildPageTests {
    static let start: Int64 = 1_796_581_800
    static let miaAddress = "192.168.1.40"
    static let miaMAC = "aa:bb:cc:00:00:01"
    static let leoAddress = "192.168.2.7"

    final class Fixture {
        let scratch: ScratchDirectory
        let store: Store
        let clock: ManualClock
        let child: ChildApp
        let parent: WebApp
        let household: DevicesPageTests.FakeHousehold
        private var cookie = ""
        private var csrf = ""

        init() throws {
            scratch = try ScratchDirectory("phosra-gate-child-page")
            store = try Store.open(directory: scratch.path, now: ChildPageTests.start)
            clock = ManualClock(wall: WallTime(unixSeconds: ChildPageTests.start))
            let roster = ProfileRoster(
                members: [
                    .init(name: "mia", clients: [ClientEntry(ChildPageTests.miaMAC)!]),
                    .init(name: "leo", clients: [ClientEntry("192.168.2.0/24")!]),
                ], defaultProfile: "none")
            var policy = CompiledPolicy()
            policy.webFilter.blockedDomains = ["reddit.com"]
            policy.screenTime.dailyLimitMinutes = 120
            let profiles =
                ["mia", "leo"].map { Profile(name: $0, rules: PolicyRules(policy)) }
                + [Profile(name: "none", rules: .unfiltered)]
            let engine = DecisionEngine(
                system: SystemRules(DecisionOptions()),
                categories: CategorySet(matcher: LabelTrie(lists: [[]], listNames: ["adult"]), present: []),
                zone: .utc, profiles: ProfileTable(roster: roster, profiles: profiles))
            household = DevicesPageTests.FakeHousehold(engine)
            let mac = MACAddress(ChildPageTests.miaMAC)!
            let neighbours: (IPAddress) -> MACAddress? = { $0 == IPAddress(ChildPageTests.miaAddress)! ? mac : nil }
            child = ChildApp(
                store: store, household: household, hosts: ["gate.home.arpa"], deviceMAC: neighbours, clock: clock,
                log: Logger())
            let hash = try StoredPassword.hash(Array("secret words".utf8), parameters: try .init(logN: 10, r: 1, p: 1))
            try WebPassword.write(hash: hash, stateDirectory: scratch.path)
            parent = WebApp(
                store: store, household: household, password: WebPassword(stateDirectory: scratch.path),
                hosts: ["gate.lan"], clock: clock, log: Logger(), deviceFacts: DeviceFacts(leasePath: ""))
            let login = toParent("POST", "/api/login", #"{"password": "secret words"}"#)
            cookie = String((login.headers.first { $0.0 == "Set-Cookie" }?.1 ?? "").prefix { $0 != ";" })
            csrf = String(login.text.split(separator: "\"")[3])
        }

        /// A request to the child's page from `client`, with `headers` (a `Host` of the home name unless given).
        func toChild(
            _ method: String, _ target: String, form: String = "", from client: String = ChildPageTests.miaAddress,
            headers: [String] = []
        ) -> (status: Int, headers: [(String, String)], text: String) {
            var head = "\(method) \(target) HTTP/1.1\r\nContent-Length: \(form.utf8.count)\r\n"
            if !headers.contains(where: { $0.hasPrefix("Host:") }) { head += "Host: gate.home.arpa\r\n" }
            head += "Content-Type: application/x-www-form-urlencoded\r\n"
            for line in headers { head += line + "\r\n" }
            let request = WebRequest(
                head: try! RequestHead(Array((head + "\r\n").utf8)), body: Array(form.utf8),
                client: IPAddress(client)!)
            let response = child.respond(request)
            return (response.status, response.headers, String(decoding: response.body, as: UTF8.self))
        }

        /// A JSON request to the parent's page, logged in.
        func toParent(
            _ method: String, _ target: String, _ body: String = ""
        ) -> (status: Int, headers: [(String, String)], text: String) {
            var head = "\(method) \(target) HTTP/1.1\r\nHost: gate.lan\r\nContent-Length: \(body.utf8.count)\r\n"
            head += "Content-Type: application/json\r\n"
            if !cookie.isEmpty { head += "Cookie: \(cookie)\r\nX-CSRF-Token: \(csrf)\r\n" }
            let request = WebRequest(
                head: try! RequestHead(Array((head + "\r\n").utf8)), body: Array(body.utf8),
                client: IPAddress("192.168.1.10")!)
            let response = parent.respond(request)
            return (response.status, response.headers, String(decoding: response.body, as: UTF8.self))
        }
    }

    @Test func aDeviceSeesItsOwnProfileAndNoControl() throws {
        let page = try Fixture()
        let mia = page.toChild("GET", "/")
        #expect(mia.status == 200)
        #expect(mia.text.contains("The internet is open."))
        #expect(mia.text.contains("120 of 120 minutes online left today"), "\(mia.text)")
        // Only asking: no parent action, no session, no other profile's name.
        for control in ["/profiles/", "/overrides", "csrf_token", "Pause", "Resume", "/devices", "leo"] {
            #expect(!mia.text.contains(control), "\(control) on the child's page")
        }
        #expect(mia.text.contains("action=\"/ask\""))
        // Another device is another profile's page; an unfiltered one has nothing to ask.
        #expect(page.toChild("GET", "/", from: Self.leoAddress).status == 200)
        let none = page.toChild("GET", "/", from: "10.0.0.9")
        #expect(none.text.contains("This device is not filtered.") && !none.text.contains("action=\"/ask\""))
        // Not the gateway's name: a rebinding page cannot read it.
        #expect(page.toChild("GET", "/", headers: ["Host: evil.example"]).status == 421)
        #expect(page.toChild("GET", "/profiles/mia").status == 404)
    }

    @Test func askingIsLimitedPerDeviceAndNotesAreEscapedOnBothPages() throws {
        let page = try Fixture()
        let hostile = "<img src=x onerror=alert(1)> please"
        let asked = page.toChild("POST", "/ask", form: "kind=site&name=www.reddit.com&note=" + Escape.url(hostile))
        #expect(asked.status == 303, "\(asked.text)")
        let shown = page.toChild("GET", "/").text
        #expect(shown.contains("&lt;img src=x onerror=alert(1)&gt; please") && !shown.contains("<img"), "\(shown)")
        #expect(shown.contains("Waiting for an answer."))
        // Again within the minute: refused, with when to ask again.
        let soon = page.toChild("POST", "/ask", form: "kind=time")
        #expect(soon.status == 429 && soon.headers.contains { $0.0 == "Retry-After" })
        // A minute apart, up to five waiting; the sixth is refused.
        for index in 1..<5 {
            page.clock.advance(by: 61_000_000_000)
            #expect(page.toChild("POST", "/ask", form: "kind=site&name=site\(index).example").status == 303)
        }
        page.clock.advance(by: 61_000_000_000)
        let sixth = page.toChild("POST", "/ask", form: "kind=time")
        #expect(sixth.status == 429 && sixth.text.contains("5 questions waiting"), "\(sixth.text)")
        #expect(try page.store.waitingRequests(now: page.clock.wall().unixSeconds).count == 5)
        // Another device of another profile has its own share.
        #expect(page.toChild("POST", "/ask", form: "kind=time", from: Self.leoAddress).status == 303)
        // A note over 200 characters, a name that is not one, a cross-site post: refused.
        page.clock.advance(by: 61_000_000_000)
        let long = String(repeating: "x", count: 201)
        #expect(page.toChild("POST", "/ask", form: "kind=time&note=\(long)", from: Self.leoAddress).status == 400)
        #expect(page.toChild("POST", "/ask", form: "kind=site&name=a<b", from: Self.leoAddress).status == 400)
        let forged = page.toChild(
            "POST", "/ask", form: "kind=time", from: Self.leoAddress, headers: ["Origin: http://evil.example"])
        #expect(forged.status == 403)

        // The parent's page lists them, escaped, in JSON and HTML.
        let listed = page.toParent("GET", "/api/requests")
        #expect(listed.status == 200 && listed.text.contains("\\u003cimg src=x"), "\(listed.text)")
        let home = page.toParent("GET", "/")
        #expect(home.text.contains("mia: open www.reddit.com — “&lt;img src=x onerror=alert(1)&gt; please”"))
        #expect(!home.text.contains("<img"))
    }

    @Test func anAllowBecomesAnOverrideAndTheChildSeesTheAnswer() throws {
        let page = try Fixture()
        #expect(page.toChild("POST", "/ask", form: "kind=site&name=www.reddit.com&note=homework").status == 303)
        page.clock.advance(by: 61_000_000_000)
        #expect(page.toChild("POST", "/ask", form: "kind=time").status == 303)
        let waiting = try page.store.waitingRequests(now: page.clock.wall().unixSeconds)
        let site = try #require(waiting.first { $0.kind == "site" })
        let time = try #require(waiting.first { $0.kind == "time" })

        let allowed = page.toParent("POST", "/api/requests/\(site.id)", #"{"answer": "allow", "minutes": 15}"#)
        #expect(allowed.status == 200 && allowed.text.contains("\"answer\": \"allow\""), "\(allowed.text)")
        let overrides = try page.store.liveOverrides(now: page.clock.wall().unixSeconds)
        let exception = try #require(overrides.first { $0.kind == "exception" })
        #expect(exception.target == "www.reddit.com" && exception.profile == "mia")
        #expect(exception.endsAt == page.clock.wall().unixSeconds + 15 * 60)
        #expect(page.toParent("POST", "/api/requests/\(time.id)", #"{"answer": "deny"}"#).status == 200)
        // Answered once: a second answer finds nothing waiting.
        #expect(page.toParent("POST", "/api/requests/\(site.id)", #"{"answer": "deny"}"#).status == 404)

        let shown = page.toChild("GET", "/").text
        #expect(shown.contains("Yes, for 15 minutes."), "\(shown)")
        #expect(shown.contains("No."))
        #expect(try page.store.waitingRequests(now: page.clock.wall().unixSeconds).isEmpty)
        // "Always" is for sites only: a local allow with no end, listed among the overrides.
        page.clock.advance(by: 61_000_000_000)
        #expect(page.toChild("POST", "/ask", form: "kind=site&name=khanacademy.org").status == 303)
        let again = try #require(try page.store.waitingRequests(now: page.clock.wall().unixSeconds).first)
        #expect(
            page.toParent("POST", "/api/requests/\(again.id)", #"{"answer": "allow", "always": true}"#).status == 200)
        let always = try page.store.liveOverrides(now: page.clock.wall().unixSeconds + 86_400 * 30)
        #expect(always.contains { $0.target == "khanacademy.org" && $0.endsAt == nil })
    }

    @Test func requestsExpireAtLocalMidnight() throws {
        let page = try Fixture()
        #expect(page.toChild("POST", "/ask", form: "kind=time").status == 303)
        let midnight = (Self.start / 86_400 + 1) * 86_400
        page.clock.advance(by: UInt64(midnight - Self.start) * 1_000_000_000)
        #expect(try page.store.waitingRequests(now: page.clock.wall().unixSeconds).isEmpty)
        #expect(page.toChild("GET", "/").text.contains("No answer today.") == false, "yesterday's are not shown")
    }
}
