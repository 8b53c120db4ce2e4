import DNSWire
import Foundation
import GateHarness
import SystemIO
import TestSupport
import Testing

/// The parent's page on the real binary, driven by `curl` and checked with `dig`
/// (docs/parent-page.md): the password first, sessions and CSRF, the `Host` check, a
/// lockout per address, overrides enforced from the next query, kept across `kill -9`, and
/// explained by `check` and `status`.
@Suite(.blocking) struct ParentPageIntegrationTests {
    static let password = "correct horse battery"

    /// A gateway's configuration with a page on loopback (and its password, when set), and
    /// what a parent's client does with the page: the gateway itself is a `Page`'s binary
    /// or an `InProcessPage`'s daemon in the test's process.
    struct PageSite {
        let scratch: ScratchDirectory
        let dnsPort: UInt16
        let webPort: UInt16
        let redirectPort: UInt16
        /// `/metrics`, on loopback.
        let metricsPort = FreePort.tcpAndUDP()
        let config: String
        var base: String { "https://127.0.0.1:\(webPort)" }

        /// `upstream` and `settings` (more lines of the configuration) are for the tests that
        /// need an upstream or a proxy of their own; `leases`: a lease file's text, given to
        /// the gateway as `dhcp_leases`.
        init(
            policy: String = PolicyDocuments.json(blocked: ["reddit.com"]), setPassword: Bool = true,
            upstream: String = "127.0.0.1:9", settings: String = "", leases: String? = nil,
            webPort: UInt16? = nil, redirectPort: UInt16? = nil
        ) throws {
            scratch = try ScratchDirectory("phosra-gate-page")
            dnsPort = FreePort.tcpAndUDP()
            self.webPort = webPort ?? FreePort.tcpAndUDP()
            self.redirectPort = redirectPort ?? FreePort.tcpAndUDP()
            let policyPath = try scratch.write("policy.json", policy)
            var leaseLine = ""
            if let leases { leaseLine = "dhcp_leases = " + (try scratch.write("dhcp.leases", leases)) }
            config = try scratch.write(
                "gate.conf",
                """
                dns_listen = 127.0.0.1:\(dnsPort)
                upstream = \(upstream)
                state_dir = \(scratch.path("state"))
                timezone = UTC
                policy = \(policyPath)
                proxy_listen =
                web_listen = 127.0.0.1:\(self.webPort)
                web_http_listen = 127.0.0.1:\(self.redirectPort)
                metrics_listen = 127.0.0.1:\(metricsPort)
                \(leaseLine)
                \(settings)
                """)
            if setPassword {
                let set = try GateCommand.run(["web-password", "--config", config], stdin: password + "\n")
                #expect(set.status == 0, "\(set.stderr)")
            }
        }

        /// `run`'s words for this configuration (the proxy on loopback at `proxyPort`, off when nil).
        func runWords(proxyPort: UInt16?, _ arguments: [String]) -> [String] {
            let proxy = proxyPort.map { ["--proxy-listen", "127.0.0.1:\($0)"] } ?? []
            return ["--config", config, "--state-dir", scratch.path("state")] + proxy + arguments
        }

        func curl(_ path: String, _ options: [String] = [], from source: String = "127.0.0.1") throws -> CurlResult {
            try Curl.run(["-k", "--interface", source] + options + [base + path])
        }

        /// Logs in from `source`: the cookie jar's path and the CSRF token.
        func login(from source: String = "127.0.0.1") throws -> (jar: String, csrf: String) {
            let jar = scratch.path("jar-\(source)")
            let result = try curl(
                "/api/login",
                ["-c", jar, "-H", "Content-Type: application/json", "-d", #"{"password": "\#(password)"}"#],
                from: source)
            #expect(result.status == 200, "\(result)")
            let csrf = try #require(TestJSON.parse(result.body)["csrf_token"]?.string)
            return (jar, csrf)
        }

        func post(
            _ path: String, _ body: String = "{}", session: (jar: String, csrf: String), extra: [String] = []
        ) throws -> CurlResult {
            try curl(
                path,
                [
                    "-b", session.jar, "-H", "Content-Type: application/json", "-H", "X-CSRF-Token: \(session.csrf)",
                    "-d", body,
                ] + extra)
        }
    }

    /// A gateway whose page a test uses: its configuration's ports and paths read as its
    /// own (`page.config`, `page.webPort`), and the parent's client's calls.
    @dynamicMemberLookup
    protocol PageGateway {
        var site: PageSite { get }
    }

    /// A gateway (the binary) with a page on loopback and a password set.
    struct Page: PageGateway {
        let site: PageSite
        let gate: GateRun

        /// `upstream`, `settings` (more lines of the configuration), `arguments` (more words
        /// for `run`) and `environment` are for the tests that need an upstream, a proxy or a
        /// clock of their own; `leases`: a lease file's text, given to the gateway as
        /// `dhcp_leases`; `proxyPort`: the proxy on loopback (off when nil).
        init(
            policy: String = PolicyDocuments.json(blocked: ["reddit.com"]), setPassword: Bool = true,
            upstream: String = "127.0.0.1:9", settings: String = "", arguments: [String] = [],
            environment: [String: String] = [:], leases: String? = nil, proxyPort: UInt16? = nil,
            webPort: UInt16? = nil, redirectPort: UInt16? = nil
        ) throws {
            site = try PageSite(
                policy: policy, setPassword: setPassword, upstream: upstream, settings: settings, leases: leases,
                webPort: webPort, redirectPort: redirectPort)
            // GateRun turns the proxy off unless a flag names it.
            gate = try GateRun(
                site.runWords(proxyPort: proxyPort, arguments), scratch: site.scratch, port: site.dnsPort,
                environment: environment)
            if setPassword {
                #expect(gate.daemon.waitFor("service=web", timeout: 10), "\(gate.log)")
            }
        }

        func dig(_ name: String) throws -> DigAnswer { try gate.dig(name) }
    }

    /// The gateway of a `Page` run in the test's process on `clock` (`InProcessGate`), so a
    /// test steps its time. Its page serves from the start when the site's password is set,
    /// else from the first second of the clock after it is.
    struct InProcessPage: PageGateway {
        let site: PageSite
        let gate: InProcessGate

        init(_ site: PageSite, arguments: [String] = [], clock: ManualClock) throws {
            self.site = site
            gate = try InProcessGate(
                site.runWords(proxyPort: nil, arguments), scratch: site.scratch, port: site.dnsPort,
                defaults: false, stateDirectory: site.scratch.path("state"), clock: clock)
        }

        func dig(_ name: String) throws -> DigAnswer { try gate.dig(name) }
    }

    /// `sudo phosra-gate web-password` writes for a daemon that runs as its own user: the
    /// file goes to the state directory's owner (here `nobody`), still 0600.
    @Test func thePasswordFileBelongsToTheStateDirectorysOwner() throws {
        if getuid() != 0 { try Test.cancel("only root can write a file for another user") }
        let scratch = try ScratchDirectory("pg-web-owner")
        let state = scratch.path("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        #expect(chown(state, 65_534, 65_534) == 0)
        let set = try GateCommand.run(["web-password", "--state-dir", state], stdin: Self.password + "\n")
        #expect(set.status == 0, "\(set.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: state + "/web-password")
        #expect(attributes[.ownerAccountID] as? Int == 65_534)
        #expect(attributes[.groupOwnerAccountID] as? Int == 65_534)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        // A link planted where the file goes is replaced, never followed: its target keeps
        // its bytes and its owner.
        let victim = try scratch.write("victim", "root's own\n")
        try FileManager.default.removeItem(atPath: state + "/web-password")
        try FileManager.default.createSymbolicLink(atPath: state + "/web-password", withDestinationPath: victim)
        let again = try GateCommand.run(["web-password", "--state-dir", state], stdin: Self.password + "\n")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "root's own\n")
        #expect(try FileManager.default.attributesOfItem(atPath: victim)[.ownerAccountID] as? Int == 0)
        #expect(
            try FileManager.default.attributesOfItem(atPath: state + "/web-password")[.type] as? FileAttributeType
                == .typeRegular)
    }

    @Test func nothingIsServedBeforeThePasswordIsSetAndThenWithinASecond() throws {
        let page = try Page(setPassword: false)
        defer { page.gate.daemon.stop() }
        #expect(try page.curl("/").exitCode != 0, "no listener without a password")
        let set = try GateCommand.run(["web-password", "--config", page.config], stdin: Self.password + "\n")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(page.gate.daemon.waitFor("service=web", timeout: 5), "\(page.gate.log)")
        let login = try page.curl("/login")
        #expect(login.status == 200 && login.body.contains("type=\"password\""), "\(login)")
        // The certificate made at first start is the gateway's own, its fingerprint logged.
        #expect(page.gate.log.contains("sha256="))
        let mode =
            try FileManager.default.attributesOfItem(atPath: page.scratch.path("state/web-key.pem"))[
                .posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// The fingerprint a parent compares with the browser's: the `listening` log line's,
    /// shown by `status` and checked by `doctor` in the same form.
    @Test func statusAndDoctorShowTheLoggedFingerprint() throws {
        let page = try Page()
        defer { page.gate.daemon.stop() }
        let logged = try #require(
            page.gate.log.split(separator: "\n").first { $0.contains("event=listening service=web") }?
                .split(separator: " ").first { $0.hasPrefix("sha256=") }.map(String.init))
        let certificate = page.scratch.path("state/web-cert.pem")
        let status = try GateCommand.run(["status", "--config", page.config])
        #expect(status.stdout.contains("web: certificate \(certificate) \(logged), valid until"), "\(status)")
        let json = try TestJSON.parse(try GateCommand.run(["status", "--json", "--config", page.config]).stdout)
        #expect(json["web"]?["sha256"]?.string.map { "sha256=" + $0 } == logged)
        let doctor = try GateCommand.run(["doctor", "--json", "--config", page.config])
        let web = try TestJSON.parse(doctor.stdout)["checks"]?.array?.first { $0["check"]?.string == "web" }
        #expect(web?["status"]?.string == "ok", "\(doctor)")
        #expect(web?["what"]?.string?.contains("\(certificate) \(logged)") == true, "\(doctor)")
    }

    /// `web_allow_clients`: a device not on the list gets a 403 before the login page, and is
    /// logged; one on it by address, or by the profile the gateway gives it, gets the page.
    @Test func onlyTheAllowedClientsGetThePage() throws {
        let page = try Page(
            settings: """
                web_allow_clients = 127.0.0.2, parents
                default_profile = none
                [profile parents]
                clients = 127.0.0.3
                """)
        defer { page.gate.daemon.stop() }
        let refused = try page.curl("/login")
        #expect(refused.status == 403 && refused.body.contains("not open to this device"), "\(refused)")
        #expect(!refused.body.contains("password"), "not even the login form")
        let api = try page.curl(
            "/api/login", ["-H", "Content-Type: application/json", "-d", #"{"password": "\#(Self.password)"}"#])
        #expect(api.status == 403 && !api.output.lowercased().contains("set-cookie"), "\(api)")
        #expect(page.gate.daemon.waitFor("event=web_client_refused client=127.0.0.1", timeout: 5), "\(page.gate.log)")
        for source in ["127.0.0.2", "127.0.0.3"] {
            let allowed = try page.curl("/login", from: source)
            #expect(allowed.status == 200 && allowed.body.contains("type=\"password\""), "\(source): \(allowed)")
        }
        _ = try page.login(from: "127.0.0.3")
    }

    /// A device cannot reach the page through the proxy (docs/proxy.md#local-destinations):
    /// CONNECT to its HTTPS port and a plain GET to its redirect port are refused as local
    /// destinations, even with both ports among those the proxy otherwise allows and IP
    /// literals allowed.
    @Test func thePageIsNotReachableThroughTheProxy() throws {
        let proxyPort = FreePort.tcpAndUDP()
        let webPort = FreePort.tcpAndUDP()
        let redirectPort = FreePort.tcpAndUDP()
        let page = try Page(
            settings: """
                allow_ip_connect = true
                connect_ports = 443, \(webPort)
                http_ports = 80, \(redirectPort)
                """, proxyPort: proxyPort, webPort: webPort, redirectPort: redirectPort)
        defer { page.gate.daemon.stop() }
        #expect(try page.curl("/login").status == 200, "the page itself answers")
        let proxy = "http://127.0.0.1:\(proxyPort)"
        for host in ["127.0.0.1", "localhost"] {
            let tunnel = try Curl.run(["-k", "-p", "-x", proxy, "https://\(host):\(webPort)/login"])
            #expect(tunnel.connectStatus == 403, "CONNECT \(host): \(tunnel)")
            #expect(tunnel.output.contains("X-Phosra-Block: local_destination"), "\(tunnel)")
            let plain = try Curl.run(["-x", proxy, "http://\(host):\(redirectPort)/login"])
            #expect(plain.status == 403 && plain.output.contains("X-Phosra-Block: local_destination"), "\(plain)")
        }
    }

    @Test func aPauseBlocksTheNextQueryAndAResumeEndsIt() throws {
        let page = try Page()
        defer { page.gate.daemon.stop() }
        #expect(try !page.dig("example.com").extendedErrors.contains { $0.hasPrefix("15 (Blocked)") })
        let session = try page.login()
        let paused = try page.post("/api/profiles/default/pause", #"{"minutes": 15}"#, session: session)
        #expect(paused.status == 200, "\(paused)")
        let answer = try page.dig("example.com")
        #expect(answer.status == "NXDOMAIN" && answer.extendedErrors == ["15 (Blocked): (paused)"], "\(answer)")
        // The TTL of the block answer stays within block_ttl and the pause's end.
        let profiles = try page.curl("/api/profiles", ["-b", session.jar])
        let card = try #require(TestJSON.parse(profiles.body)["profiles"]?.array?.first)
        #expect(card["state"]?.string == "paused" && card["until"]?.string != nil, "\(profiles.body)")
        #expect(try page.post("/api/profiles/default/resume", session: session).status == 200)
        #expect(try !page.dig("example.com").extendedErrors.contains { $0.hasPrefix("15 (Blocked)") })
    }

    @Test func anExceptionLetsABlockedNameThroughUntilItEnds() throws {
        let page = try Page()
        defer { page.gate.daemon.stop() }
        #expect(try page.dig("www.reddit.com").extendedErrors == ["15 (Blocked): (blocked_domain:reddit.com)"])
        let session = try page.login()
        let until = Date(timeIntervalSinceNow: 3)
        let text = ISO8601DateFormatter().string(from: until)
        let allowed = try page.post(
            "/api/profiles/default/exceptions", #"{"name": "reddit.com", "until": "\#(text)"}"#, session: session)
        #expect(allowed.status == 200, "\(allowed)")
        #expect(
            try !page.dig("www.reddit.com").extendedErrors.contains { $0.hasPrefix("15 (Blocked)") },
            "allowed from the next query")
        #expect(
            try waitUntil(timeout: 8_000_000_000, interval: 100_000_000) {
                try page.dig("www.reddit.com").extendedErrors == ["15 (Blocked): (blocked_domain:reddit.com)"]
            }, "blocked again once the exception ended")
    }

    @Test func overridesSurviveKill9AndCheckAndStatusExplainThem() throws {
        let page = try Page()
        let session = try page.login()
        #expect(try page.post("/api/profiles/default/pause", #"{"minutes": 30}"#, session: session).status == 200)
        kill(page.gate.daemon.pid, SIGKILL)
        _ = page.gate.daemon.waitForExit(timeout: 5)
        let check = try GateCommand.run(["check", "--config", page.config, "example.com"])
        #expect(check.stdout.contains("example.com: block paused — the parent paused this profile"), "\(check)")
        #expect(check.stdout.contains("by page 127.0.0.1"), "\(check)")
        let status = try GateCommand.run(["status", "--config", page.config])
        #expect(status.stdout.contains("override 1: pause until"), "\(status)")
        let again = try GateRun(
            ["--config", page.config, "--state-dir", page.scratch.path("state")], scratch: page.scratch,
            port: page.gate.port)
        defer { again.daemon.stop() }
        #expect(try again.dig("example.com").extendedErrors == ["15 (Blocked): (paused)"], "\(again.log)")
    }

    @Test func loginsAreLimitedPerAddressNeverForEveryone() throws {
        let page = try Page()
        defer { page.gate.daemon.stop() }
        func attempt(_ password: String, from source: String) throws -> CurlResult {
            try page.curl(
                "/api/login", ["-H", "Content-Type: application/json", "-d", #"{"password": "\#(password)"}"#],
                from: source)
        }
        for _ in 0..<5 { #expect(try attempt("guess", from: "127.0.0.2").status == 401) }
        let locked = try attempt(Self.password, from: "127.0.0.2")
        #expect(locked.status == 429, "\(locked)")
        let wait = locked.output.split(separator: "\r\n").first { $0.lowercased().hasPrefix("retry-after:") }
            .flatMap { Int($0.split(separator: " ").last ?? "") }
        #expect(wait.map { (800...900).contains($0) } == true, "15 minutes: \(locked.output)")
        // The parent's phone, at another address, is not locked out.
        #expect(try attempt(Self.password, from: "127.0.0.3").status == 200)
        #expect(page.gate.log.contains("event=web_login_failed client=127.0.0.2"), "\(page.gate.log)")
    }

    @Test func aChangeNeedsTheSessionTheTokenAndTheOrigin() throws {
        let page = try Page()
        defer { page.gate.daemon.stop() }
        let session = try page.login()
        let pause = "/api/profiles/default/pause"
        let noSession = try page.curl(pause, ["-H", "Content-Type: application/json", "-d", "{}"])
        #expect(noSession.status == 401)
        let noToken = try page.curl(pause, ["-b", session.jar, "-H", "Content-Type: application/json", "-d", "{}"])
        #expect(noToken.status == 403)
        let foreign = try page.post(pause, session: session, extra: ["-H", "Origin: https://evil.example"])
        #expect(foreign.status == 403, "\(foreign)")
        // A form post from another site, as a child's page would send it.
        let form = try page.curl(
            "/profiles/default/pause",
            ["-b", session.jar, "-H", "Origin: http://192.168.1.66", "-d", "until=resumed&csrf_token=\(session.csrf)"])
        #expect(form.status == 403)
        // The same from a sandboxed frame (`Origin: null`), which the browser marks cross-site.
        let sandboxed = try page.curl(
            "/profiles/default/pause",
            [
                "-b", session.jar, "-H", "Origin: null", "-H", "Sec-Fetch-Site: cross-site", "-d",
                "until=resumed&csrf_token=\(session.csrf)",
            ])
        #expect(sandboxed.status == 403)
        #expect(
            try !page.dig("example.com").extendedErrors.contains { $0.hasPrefix("15 (Blocked)") }, "nothing was paused")
        // A GET changes nothing, whatever it asks.
        #expect(try page.curl(pause, ["-b", session.jar]).status == 404)
        // The page's own form, with its token and origin, works.
        let own = try page.curl(
            "/profiles/default/pause",
            ["-b", session.jar, "-H", "Origin: \(page.base)", "-d", "minutes=15&csrf_token=\(session.csrf)"])
        #expect(own.status == 303, "\(own)")
        // As a browser sends it under `Referrer-Policy: no-referrer`: `Origin: null`, same-origin.
        let browser = try page.curl(
            "/profiles/default/resume",
            [
                "-b", session.jar, "-H", "Origin: null", "-H", "Sec-Fetch-Site: same-origin", "-d",
                "csrf_token=\(session.csrf)",
            ])
        #expect(browser.status == 303, "\(browser)")
    }

    @Test func aForeignHostIsRefusedAndThePlainPortOnlyRedirects() throws {
        let page = try Page()
        defer { page.gate.daemon.stop() }
        let rebound = try page.curl("/api/profiles", ["-H", "Host: attacker.example"])
        #expect(rebound.status == 421)
        let headers = try page.curl(
            "/api/login", ["-H", "Content-Type: application/json", "-d", #"{"password": "\#(Self.password)"}"#])
        let cookie = headers.output.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") } ?? ""
        for flag in ["HttpOnly", "Secure", "SameSite=Strict", "Path=/"] {
            #expect(cookie.contains(flag), "\(cookie)")
        }
        for header in [
            "content-security-policy: default-src 'none'", "x-content-type-options: nosniff",
            "referrer-policy: no-referrer", "cache-control: no-store", "frame-ancestors 'none'",
        ] {
            #expect(headers.output.lowercased().contains(header), "\(header)")
        }
        let plain = try Curl.run(["http://127.0.0.1:\(page.redirectPort)/devices?x=1"])
        #expect(plain.status == 301 && plain.output.contains("Location: \(page.base)/devices?x=1"), "\(plain)")
    }

    @Test func aNewPasswordEndsEverySession() throws {
        let page = try Page()
        defer { page.gate.daemon.stop() }
        let session = try page.login()
        #expect(try page.curl("/api/profiles", ["-b", session.jar]).status == 200)
        let set = try GateCommand.run(["web-password", "--config", page.config], stdin: "another long secret\n")
        #expect(set.status == 0)
        #expect(try page.curl("/api/profiles", ["-b", session.jar]).status == 401)
    }

    @Test func namesFromOutsideAreEscapedOnThePageAndInJSON() throws {
        let page = try Page()
        defer { page.gate.daemon.stop() }
        // A query name with <, ", ' and a right-to-left override (U+202E), as dig escapes them.
        let hostile = #"x\060b\034c\039d\226\128\174e.reddit.com"#
        #expect(try page.dig(hostile).status == "NXDOMAIN")
        let session = try page.login()
        let html = try #require(
            try waitFor(timeout: 15_000_000_000, interval: 200_000_000) { () -> String? in
                let day = try page.curl("/profiles/default", ["-b", session.jar])
                return day.body.contains("reddit.com</td>") ? day.body : nil
            }, "the hit reached the history")
        // The name is kept in its presentation form (RFC 1035 §5.1: `"` quoted, the override's
        // bytes as \DDD), then escaped for HTML and for JSON.
        #expect(html.contains(#"x&lt;b\&quot;c&#39;d\226\128\174e.reddit.com"#), "\(html)")
        #expect(!html.contains("x<b"))
        let json = try page.curl("/api/profiles/default/hits", ["-b", session.jar])
        #expect(json.body.contains(#"x\u003cb\\\"c\u0027d\\226\\128\\174e.reddit.com"#), "\(json.body)")
    }

    @Test func theDevicesPageNamesADeviceFromTheDHCPLeaseFile() throws {
        // dnsmasq's format. Loopback has no neighbour entry, so the device is known by its
        // address, and its lease names it by that address.
        let page = try Page(leases: "0 aa:bb:cc:dd:ee:01 127.0.0.1 Mias-Laptop 01:aa:bb:cc:dd:ee:01\n")
        defer { page.gate.daemon.stop() }
        _ = try page.dig("example.com")
        let session = try page.login()
        let html = try #require(
            try waitFor(timeout: 15_000_000_000, interval: 200_000_000) { () -> String? in
                let devices = try page.curl("/devices", ["-b", session.jar])
                return devices.body.contains("127.0.0.1") ? devices.body : nil
            }, "the sighting reached the store")
        #expect(html.contains("Mias-Laptop"), "\(html)")
        #expect(html.contains("<span class=\"new\">new</span>"))
        #expect(!page.gate.log.contains("dhcp_leases_unreadable"), "\(page.gate.log)")
    }

    /// A device in no lease file is named by reverse DNS through the upstream, once the
    /// page has asked (it never waits for the answer); a hostile name is shown escaped.
    @Test func theDevicesPageNamesADeviceByReverseDNS() throws {
        // The upstream: a PTR answer for 127.0.0.5 and a hostile one for 127.0.0.6; NXDOMAIN else.
        let hostile: [UInt8] = Array("<img src=x onerror=alert(1)>\"'".utf8)
        let upstream = try FakeUDPUpstream { query in
            guard let message = try? DNSMessage.parse(query), let question = message.questions.first else { return [] }
            var header = DNSHeader(id: message.header.id, questionCount: 1)
            header.isResponse = true
            header.recursionDesired = true
            header.recursionAvailable = true
            let target: DNSName?
            switch question.name.presentation {
            case "5.0.0.127.in-addr.arpa": target = try? DNSName("den-laptop.lan")
            case "6.0.0.127.in-addr.arpa":
                target = try? DNSName(wire: [UInt8(hostile.count)] + hostile + [3] + Array("lan".utf8) + [0])
            default: target = nil
            }
            if target == nil { header.rcode = .nxDomain }
            var writer = DNSMessageWriter(header: header)
            writer.addQuestion(question)
            if let target, question.type == .ptr {
                writer.addRecord(ResourceRecord(name: question.name, ttl: 60, rdata: .ptr(target)), to: .answer)
            }
            return [.send(writer.finish())]
        }
        let page = try Page(upstream: upstream.spec)
        defer { page.gate.daemon.stop() }
        for client in ["127.0.0.5", "127.0.0.6"] { _ = try page.gate.dig("example.com", "A", ["-b", client]) }
        let session = try page.login()
        var devices: [TestJSON] = []
        let named = waitUntil(timeout: .seconds(15), interval: 200_000_000) {
            let body = (try? page.curl("/api/devices", ["-b", session.jar]).body) ?? ""
            devices = (try? TestJSON.parse(body)["devices"]?.array) ?? []
            return devices.filter { $0["dns_name"]?.string != nil }.count == 2
        }
        #expect(named, "\(devices.count) devices\n\(page.gate.log)")
        let byClient = Dictionary(devices.map { ($0["client"]?.string ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byClient["127.0.0.5"]?["dns_name"]?.string == "den-laptop.lan")
        // In its presentation form, as names are everywhere: a space as \032.
        #expect(byClient["127.0.0.6"]?["dns_name"]?.string == #"<img\032src=x\032onerror=alert(1)>\"'.lan"#)
        let html = try page.curl("/devices", ["-b", session.jar]).body
        #expect(html.contains("den-laptop.lan"), "\(html)")
        #expect(html.contains("&lt;img") && !html.contains("<img"), "\(html)")
    }

    @Test func hostileRequestsGetAClearAnswerAndNothingMore() throws {
        let page = try Page()
        defer { page.gate.daemon.stop() }
        let bigHead = try page.curl("/login", ["-H", "X-Filler: " + String(repeating: "a", count: 9_000)])
        #expect(bigHead.status == 431, "\(bigHead)")
        let bigBody = try page.curl(
            "/api/login",
            ["-H", "Content-Type: application/json", "--data-binary", String(repeating: "x", count: 17_000)])
        #expect(bigBody.status == 413, "\(bigBody)")
        let chunked = try page.curl(
            "/api/login", ["-H", "Transfer-Encoding: chunked", "-H", "Content-Type: application/json", "-d", "{}"])
        #expect(chunked.status == 411, "\(chunked)")
        // A request then a half-close: the answer comes, then the end (no spinning on EOF).
        let reply = try Self.exchange(
            port: page.redirectPort, Array("GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
        #expect(reply.hasPrefix("HTTP/1.1 301"), "\(reply)")
        // Garbage is a 400 and the end.
        #expect(try Self.exchange(port: page.redirectPort, Array("\u{1}\u{2}\r\n\r\n".utf8)).hasPrefix("HTTP/1.1 400"))
        #expect(try page.curl("/login").status == 200, "still serving")
    }

    /// Sends `bytes` over plain TCP, shuts down the sending side, and reads until the end
    /// (at most 5 s): what the gateway answered before closing.
    static func exchange(port: UInt16, _ bytes: [UInt8]) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(connected == 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        shutdown(fd, Int32(SHUT_WR))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }
}

extension ParentPageIntegrationTests.PageGateway {
    subscript<T>(dynamicMember path: KeyPath<ParentPageIntegrationTests.PageSite, T>) -> T { site[keyPath: path] }

    func curl(_ path: String, _ options: [String] = [], from source: String = "127.0.0.1") throws -> CurlResult {
        try site.curl(path, options, from: source)
    }

    func login(from source: String = "127.0.0.1") throws -> (jar: String, csrf: String) {
        try site.login(from: source)
    }

    func post(
        _ path: String, _ body: String = "{}", session: (jar: String, csrf: String), extra: [String] = []
    ) throws -> CurlResult {
        try site.post(path, body, session: session, extra: extra)
    }
}
