import DNSProxy
import DNSWire
import Store
import Sync
import TestSupport
import Testing

@testable import Commands
@testable import Gateway

/// What `doctor` makes of each finding (docs/doctor.md): the outcome, and a fix for every
/// failure. The probes behind them are tested against the real binary (DoctorIntegrationTests).
@Suite(.blocking) struct DoctorVerdictTests {
    typealias V = DoctorVerdict
    static let now: Int64 = 1_796_040_000

    static func beat(age: Int64) -> Heartbeat {
        Heartbeat(pid: 42, startedAt: now - 600, updatedAt: now - age, version: "0.1.0", listeners: [])
    }

    @Test func theDaemon() {
        let down = V.daemon(alive: false, heartbeat: nil, now: Self.now, stateDirectory: "/var/lib/phosra-gate")
        #expect(down.outcome == .fail && down.what.contains("not running") && down.fix != nil)
        let leftOver = V.daemon(alive: false, heartbeat: Self.beat(age: 2), now: Self.now, stateDirectory: "s")
        #expect(leftOver.outcome == .fail, "a heartbeat without the lock is a crashed run's")
        #expect(V.daemon(alive: true, heartbeat: nil, now: Self.now, stateDirectory: "s").outcome == .fail)
        let stuck = V.daemon(alive: true, heartbeat: Self.beat(age: 31), now: Self.now, stateDirectory: "s")
        #expect(stuck.outcome == .fail && stuck.what.contains("31 s ago"))
        let fine = V.daemon(alive: true, heartbeat: Self.beat(age: 30), now: Self.now, stateDirectory: "s")
        #expect(fine.outcome == .ok && fine.what.contains("pid 42"))
    }

    @Test func thePagesCertificate() {
        func web(
            password: Bool = true, alive: Bool = true, parents: Bool = false, _ certificate: V.WebCertificate
        ) -> DoctorCheck {
            V.web(
                passwordSet: password, alive: alive, path: "/s/web-cert.pem", parents: parents,
                certificate: certificate, now: Self.now)
        }
        let fingerprint = "AB:CD"
        let fine = web(.loaded(fingerprint: fingerprint, notAfter: Self.now + 800 * 86_400))
        #expect(fine.outcome == .ok && fine.what.hasPrefix("certificate /s/web-cert.pem sha256=AB:CD, valid until"))
        #expect(web(password: false, .absent).outcome == .skip, "no page without a password")
        #expect(web(password: false, .absent).fix?.contains("web-password") == true)
        #expect(web(alive: false, .absent).outcome == .skip, "made at the page's first start")
        #expect(web(.absent).outcome == .fail, "a running page has one")
        let soon = web(.loaded(fingerprint: fingerprint, notAfter: Self.now + 29 * 86_400))
        #expect(soon.outcome == .fail && soon.fix?.contains("remove /s/web-cert.pem") == true)
        let expired = web(parents: true, .loaded(fingerprint: fingerprint, notAfter: Self.now - 1))
        #expect(
            expired.outcome == .fail && expired.what.contains("expired")
                && expired.fix?.contains("web_tls_cert") == true)
        let broken = web(.unreadable("web-key.pem: the key is not the certificate's"))
        #expect(broken.outcome == .fail && broken.what.contains("not the certificate's"))
    }

    @Test func listenersAndUpstreams() {
        #expect(V.listener("dns udp", "127.0.0.1:53", .answered).outcome == .ok)
        let dead = V.listener("proxy", "127.0.0.1:3128", .failed("connection refused"))
        #expect(dead.outcome == .fail && dead.what == "proxy 127.0.0.1:3128 does not answer (connection refused)")
        #expect(V.upstream("127.0.0.1:53", .answered).outcome == .ok)
        let upstream = V.upstream("tls://9.9.9.9:853#dns.quad9.net", .failed("timed out"))
        #expect(upstream.outcome == .fail && upstream.what.contains("timed out") && upstream.fix != nil)
    }

    /// Replies made by the proxy's own answer builder, read as `doctor` reads them.
    @Test(arguments: [BlockMode.nxdomain, .null, .refused, BlockMode("ip:198.51.100.1")!])
    func theCanaryAnswer(mode: BlockMode) throws {
        let query = try DNSQuery.parse(DoctorProbe.canaryQuery(id: 7))
        #expect(query.question.name.description.lowercased().hasPrefix("blocked.phosra-gate.test"))
        let builder = AnswerBuilder(mode: mode, blockTTL: 10)
        #expect(V.canaryAnswer(builder.block(query, reason: "canary", ttl: 10)) == .blocked)
        let other = V.canaryAnswer(builder.block(query, reason: "category:adult", ttl: 10))
        #expect(other != .blocked, "another reason is a list's block, not the canary")
        #expect(V.canaryAnswer(builder.negative(query, rcode: .nxDomain, ttl: 10)) == .notBlocked("NXDOMAIN"))
        #expect(V.canaryAnswer([1, 2, 3]) != .blocked)
    }

    @Test func theCanary() {
        #expect(V.canary(.blocked, client: "127.0.0.1", profile: "kids", state: nil).outcome == .ok)
        let open = V.canary(.notBlocked("NXDOMAIN"), client: "127.0.0.1", profile: "kids", state: nil)
        #expect(open.outcome == .fail && open.fix != nil)
        var paused = SyncState(profile: "kids")
        paused.noActivePolicy = true
        paused.noPolicyUnfiltered = true
        let unfiltered = V.canary(.notBlocked("NXDOMAIN"), client: "127.0.0.1", profile: "kids", state: paused)
        #expect(unfiltered.outcome == .fail && unfiltered.fix!.contains("on_no_policy"))
        let none = V.canary(.notBlocked("NXDOMAIN"), client: "127.0.0.1", profile: "none", state: nil)
        #expect(none.outcome == .skip, "this host is not filtered: nothing was tested")
        #expect(V.canary(nil, client: "?", profile: "?", state: nil).outcome == .skip)
    }

    @Test func theClock() {
        let unsync: Int32 = 0x40
        let timeError: Int32 = 5
        func state(_ state: Int32, _ status: Int32) -> V.KernelClock {
            V.kernelClock(state: state, status: status, errno: 1, unsync: unsync, timeError: timeError)
        }
        #expect(state(0, 0) == .synchronised)
        #expect(state(0, 0x41) == .unsynchronised, "STA_UNSYNC among other bits")
        #expect(state(5, 0) == .unsynchronised, "TIME_ERROR")
        #expect(state(-1, 0) == .unknown("adjtimex failed, errno 1"))
        #expect(V.clock(.synchronised).outcome == .ok)
        #expect(V.clock(.unsynchronised).outcome == .fail && V.clock(.unsynchronised).fix != nil)
        #expect(V.clock(.unknown("x")).outcome == .skip)
        #expect(V.clock(.testClock).outcome == .skip)
    }

    @Test func theAPI() {
        #expect(V.api(profile: "kids", fetch: .notModified, state: nil).outcome == .ok)
        #expect(V.api(profile: "kids", fetch: .policy([]), state: nil).outcome == .ok)
        #expect(V.api(profile: "kids", fetch: .noPolicy, state: nil).outcome == .ok)
        let refused = V.api(profile: "kids", fetch: .unauthorized, state: nil)
        #expect(refused.outcome == .fail && refused.fix!.contains("phosra-gate register --profile kids"))
        let down = V.api(profile: "kids", fetch: .failed("connection refused"), state: nil)
        #expect(down.outcome == .fail && down.what.contains("connection refused"))
        #expect(V.api(profile: "kids", fetch: .rateLimited(retryAfter: 60), state: nil).outcome == .skip)
        var revoked = SyncState(profile: "kids")
        revoked.revoked = true
        let stored = V.api(profile: "kids", fetch: .notModified, state: revoked)
        #expect(stored.outcome == .fail && stored.what.contains("revoked"), "the store's word counts too")
    }

    /// `nft list table` outputs, as nft 1.0 words them.
    @Test func theFirewall() {
        let current = "table inet phosra_gate {\n\tcomment \"phosra-gate 0123456789abcdef\"\n}\n"
        #expect(
            V.firewall(DoctorProbe.listing(status: 0, output: current), expected: "0123456789abcdef").outcome == .ok)
        let old = V.firewall(DoctorProbe.listing(status: 0, output: current), expected: "fedcba9876543210")
        #expect(old.outcome == .fail && old.what.contains("out of date") && old.fix!.contains("firewall apply"))
        let unmarked = V.firewall(.table("table inet phosra_gate {\n}\n"), expected: "0123456789abcdef")
        #expect(unmarked.outcome == .fail)
        let missing =
            "Error: No such file or directory\nlist table inet phosra_gate\n                ^^^^^^^^^^^\n"
        #expect(DoctorProbe.listing(status: 1, output: missing) == .missing)
        #expect(V.firewall(.missing, expected: "x").outcome == .fail)
        let denied = DoctorProbe.listing(
            status: 1, output: "Error: Could not process rule: Operation not permitted\n")
        #expect(V.firewall(denied, expected: "x").outcome == .skip)
        #expect(V.firewall(.unavailable("nft not found"), expected: "x").outcome == .skip)
    }

    @Test func theLists() {
        let fresh = V.lists(newest: ("l/adult/a.txt", Self.now - 3600), folders: ["l"], now: Self.now)
        #expect(fresh.outcome == .ok)
        let week = V.lists(newest: ("l/adult/a.txt", Self.now - 7 * 86_400), folders: ["l"], now: Self.now)
        #expect(week.outcome == .ok, "a week exactly is still fresh")
        let old = V.lists(newest: ("l/adult/a.txt", Self.now - 8 * 86_400), folders: ["l"], now: Self.now)
        #expect(old.outcome == .fail && old.what.contains("8 d ago") && old.fix!.contains("blocklists update"))
        #expect(V.lists(newest: nil, folders: ["l", "s/lists"], now: Self.now).outcome == .fail)
    }

    @Test func theReport() {
        let checks: [DoctorCheck] = [
            .ok("daemon", "alive"), .skip("clock", "unknown"), .fail("lists", "old", fix: "update"),
        ]
        #expect(DoctorReport.exitStatus(checks) == 1)
        #expect(DoctorReport.exitStatus(Array(checks.prefix(2))) == 0, "a skip is no failure")
        #expect(
            checks.map(DoctorReport.line) == [
                "ok   daemon: alive", "skip clock: unknown", "FAIL lists: old — fix: update",
            ])
        #expect(
            DoctorReport.json(Array(checks.suffix(1)))
                == #"{"ok":false,"checks":[{"check":"lists","status":"fail","what":"old","fix":"update"}]}"#)
    }
}
