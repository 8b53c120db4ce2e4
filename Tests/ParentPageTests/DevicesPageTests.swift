import DomainMatch
import HTTP1
import Passwords
import Policy
import Store
import SystemIO
import TestSupport
import Testing

@testable import ParentPage

/// The Devices page and `/api/devices` (docs/parent-page.md#pages), driven as the server
/// drives `WebApp`: a real store on a scratch directory, a lease file and a vendor
/// registry written for the test, and a household whose engine has three profiles.
@Suite(.blocking) struct DevicesPageTests {
    static let start: Int64 = 1_796_581_800
    /// An Apple MAC address with a hostile DHCP host name: a script tag and a right-to-left override.
    static let laptop = "a4:83:e7:11:22:33"
    static let hostileName = "<script>x</script>\u{202E}txt.exe"

    final class FakeHousehold: Household, @unchecked Sendable {
        let engine: DecisionEngine<LabelTrie>
        init(_ engine: DecisionEngine<LabelTrie>) { self.engine = engine }
        func currentEngine() -> DecisionEngine<LabelTrie> { engine }
        func parentChanged() {}
    }

    /// A page on a fresh store, with a session open: its requests carry the cookie, and
    /// `csrf` the token.
    final class Fixture {
        let scratch: ScratchDirectory
        let store: Store
        let clock: ManualClock
        let app: WebApp
        let leases: String
        private(set) var cookie = ""
        private(set) var csrf = ""

        init(leases leaseText: String? = nil) throws {
            scratch = try ScratchDirectory("phosra-gate-devices-page")
            store = try Store.open(directory: scratch.path, now: DevicesPageTests.start)
            clock = ManualClock(wall: WallTime(unixSeconds: DevicesPageTests.start))
            leases = scratch.path("dnsmasq.leases")
            if let leaseText { _ = try scratch.write("dnsmasq.leases", leaseText) }
            _ = try scratch.write(
                "ieee/oui.csv",
                """
                Registry,Assignment,Organization Name,Organization Address
                MA-L,A483E7,"Apple, Inc.",1 Infinite Loop Cupertino CA US 95014

                """)
            let hash = try StoredPassword.hash(Array("secret words".utf8), parameters: try .init(logN: 10, r: 1, p: 1))
            try WebPassword.write(hash: hash, stateDirectory: scratch.path)
            let roster = ProfileRoster(
                members: [
                    .init(name: "mia", clients: [ClientEntry("aa:bb:cc:00:00:01")!]),
                    .init(name: "leo", clients: [ClientEntry("192.168.1.0/24")!]),
                    .init(name: "parents"),
                ], defaultProfile: "parents")
            let profiles = ["mia", "leo", "parents"].map { Profile(name: $0, rules: .unfiltered) }
            let engine = DecisionEngine(
                system: SystemRules(DecisionOptions()),
                categories: CategorySet(matcher: LabelTrie(lists: [[]], listNames: ["adult"]), present: []),
                zone: .utc,
                profiles: ProfileTable(
                    roster: roster, profiles: profiles, assignments: [MACAddress("aa:bb:cc:00:00:02")!: "mia"]))
            app = WebApp(
                store: store, household: FakeHousehold(engine), password: WebPassword(stateDirectory: scratch.path),
                hosts: ["gate.lan"], clock: clock, log: Logger(),
                deviceFacts: DeviceFacts(leasePath: leases, vendorDirectory: scratch.path("ieee")))
            let login = send("POST", "/api/login", #"{"password": "secret words"}"#, json: true)
            #expect(login.status == 200)
            let setCookie = login.headers.first { $0.0 == "Set-Cookie" }?.1 ?? ""
            cookie = String(setCookie.prefix { $0 != ";" })
            csrf = String(login.text.split(separator: "\"")[3])
        }

        func send(
            _ method: String, _ target: String, _ body: String = "", json: Bool = false, token: Bool = true
        ) -> (status: Int, headers: [(String, String)], text: String) {
            var head = "\(method) \(target) HTTP/1.1\r\nHost: gate.lan\r\nContent-Length: \(body.utf8.count)\r\n"
            head += "Content-Type: \(json ? "application/json" : "application/x-www-form-urlencoded")\r\n"
            if !cookie.isEmpty { head += "Cookie: \(cookie)\r\n" }
            if token, !csrf.isEmpty, json { head += "X-CSRF-Token: \(csrf)\r\n" }
            let request = WebRequest(
                head: try! RequestHead(Array((head + "\r\n").utf8)), body: Array(body.utf8),
                client: IPAddress("192.168.1.10")!)
            let response = app.respond(request)
            return (response.status, response.headers, String(decoding: response.body, as: UTF8.self))
        }

        /// A device the gateway served: by MAC when `mac` is given, else by address.
        func saw(_ client: String, mac: String?, address: String, profile: String, at seen: Int64) throws {
            try store.recordSightings([
                ClientSighting(
                    profile: profile, client: client, address: address, mac: mac, firstSeen: seen, lastSeen: seen,
                    queries: 1)
            ])
        }
    }

    static func lease(_ mac: String, _ address: String, _ name: String) -> String {
        "\(start + 3_600) \(mac) \(address) \(name) *\n"
    }

    @Test func eachDeviceShowsItsNamesVendorAndWhyEscapedOnThePageAndInJSON() throws {
        let page = try Fixture(
            leases: Self.lease(Self.laptop, "192.168.1.23", Self.hostileName)
                + Self.lease("02:11:22:33:44:55", "192.168.1.30", "Mias-Tablet")
                + Self.lease("aa:aa:aa:aa:aa:aa", "192.168.1.50", "printer"))
        try page.saw(Self.laptop, mac: Self.laptop, address: "192.168.1.23", profile: "leo", at: Self.start - 100)
        try page.saw(
            "02:11:22:33:44:55", mac: "02:11:22:33:44:55", address: "10.0.0.30", profile: "parents",
            at: Self.start - 90)
        // Known by address only: its lease names it by that address.
        try page.saw("192.168.1.50", mac: nil, address: "192.168.1.50", profile: "leo", at: Self.start - 80)
        try page.store.saveDevice(
            mac: "aa:bb:cc:00:00:02", name: "Mia's phone", profile: "mia", now: Self.start - 50, by: "page")
        try page.saw(
            "aa:bb:cc:00:00:02", mac: "aa:bb:cc:00:00:02", address: "192.168.1.40", profile: "mia",
            at: Self.start - 70)
        let html = page.send("GET", "/devices")
        #expect(html.status == 200)
        #expect(html.text.contains("&lt;script&gt;x&lt;/script&gt;\\u{202e}txt.exe"), "\(html.text)")
        #expect(!html.text.contains("<script>") && !html.text.contains("\u{202E}"))
        #expect(html.text.contains("Apple, Inc."))
        #expect(html.text.contains("private address") && html.text.contains("Mias-Tablet"))
        #expect(html.text.contains("printer"))
        #expect(html.text.contains("Mia&#39;s phone") && html.text.contains("(assigned on the page)"))
        #expect(html.text.contains("(address entry 192.168.1.0/24 of the configuration)"))
        #expect(html.text.contains("<strong>parents</strong> <span class=\"muted\">(default_profile"))
        let json = page.send("GET", "/api/devices", json: true)
        #expect(json.text.contains(#""lease_name": "\u003cscript\u003ex\u003c/script\u003e\u202etxt.exe""#))
        #expect(json.text.contains(#""vendor": "Apple, Inc.""#))
        #expect(json.text.contains(#""profile_now": "mia", "why": "assigned on the page""#), "\(json.text)")
        #expect(json.text.contains(#""new": true"#))
    }

    @Test func aDeviceStaysNewUntilAPostWithTheTokenMarksItSeen() throws {
        let page = try Fixture()
        try page.saw(Self.laptop, mac: Self.laptop, address: "192.168.1.23", profile: "leo", at: Self.start - 100)
        #expect(page.send("GET", "/devices").text.contains("<span class=\"new\">new</span>"))
        #expect(page.send("GET", "/devices").text.contains("Mark all as seen"), "looking changes nothing")
        #expect(page.send("POST", "/devices/seen", "through=\(Self.start)").status == 403, "no CSRF token")
        #expect(page.send("POST", "/api/devices/seen", "{}", json: true, token: false).status == 403)
        #expect(page.send("GET", "/api/devices", json: true).text.contains(#""new": true"#))
        // The page was made at `start`; a device first seen after that stays new.
        page.clock.advance(by: 60_000_000_000)
        try page.saw("10.0.0.9", mac: nil, address: "10.0.0.9", profile: "parents", at: Self.start + 30)
        let marked = page.send("POST", "/devices/seen", "through=\(Self.start)&csrf_token=\(page.csrf)")
        #expect(marked.status == 303)
        let after = page.send("GET", "/devices").text
        #expect(after.components(separatedBy: "<span class=\"new\">new</span>").count == 2, "\(after)")
        #expect(after.contains("1 new"))
        let api = page.send("POST", "/api/devices/seen", "{}", json: true)
        #expect(api.status == 200 && api.text == #"{"seen_through": "2026-12-06T18:31:00Z"}"#, "\(api.text)")
        #expect(!page.send("GET", "/api/devices", json: true).text.contains(#""new": true"#))
    }

    @Test func aMissingOrStrangeLeaseFileGivesNoNamesAndOneWarningNeverAnErrorPage() throws {
        let page = try Fixture()
        try page.saw(Self.laptop, mac: Self.laptop, address: "192.168.1.23", profile: "leo", at: Self.start - 100)
        let html = page.send("GET", "/devices")
        #expect(html.status == 200 && html.text.contains(Self.laptop))
        let file = LeaseFile(path: page.leases)
        #expect(file.refresh() != nil && file.refresh() == nil, "a file that stays missing is said once")
        _ = try page.scratch.write("dnsmasq.leases", "this is not a lease file\n")
        #expect(file.refresh() == .unrecognised(path: page.leases) && file.refresh() == nil)
        #expect(page.send("GET", "/devices").status == 200)
        _ = try page.scratch.write("dnsmasq.leases", Self.lease(Self.laptop, "192.168.1.23", "laptop"))
        #expect(file.refresh() == nil && file.leases.map(\.hostName) == ["laptop"])
        #expect(page.send("GET", "/devices").text.contains("laptop"), "read again once it changed")
    }
}
