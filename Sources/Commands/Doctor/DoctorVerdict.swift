import DNSProxy
import DNSWire
import Firewall
import Gateway
import Policy
import Store
import Sync

/// What each check of `doctor` makes of what the probes found (docs/doctor.md): pure, so
/// every outcome and every fix is tested without a gateway. The probes are in
/// `DoctorProbe`.
enum DoctorVerdict {
    /// How old the heartbeat may be: `run` writes one every 5 s.
    static let heartbeatStale: Int64 = 30
    /// How old the newest list file may be (docs/doctor.md#lists).
    static let listsMaxAge = NotifySetup.listsMaxAge

    static let restart = "systemctl restart phosra-gate, then read why it stopped: journalctl -u phosra-gate"

    /// What a probe of a listener or an upstream came to.
    enum Probe: Equatable, Sendable {
        case answered
        case failed(String)
    }

    // MARK: The daemon

    /// `alive`: the state directory's lock is held; `now`: unix seconds.
    static func daemon(alive: Bool, heartbeat: Heartbeat?, now: Int64, stateDirectory: String) -> DoctorCheck {
        guard alive else {
            return .fail(
                "daemon", "phosra-gate run is not running (state directory \(stateDirectory))",
                fix: "start it: systemctl start phosra-gate; if it does not stay up, journalctl -u phosra-gate says why"
            )
        }
        guard let heartbeat else {
            return .fail(
                "daemon", "phosra-gate run holds \(stateDirectory) but has written no heartbeat",
                fix: "wait a few seconds and ask again; if it stays so, \(restart)")
        }
        let age = now - heartbeat.updatedAt
        guard age <= heartbeatStale else {
            return .fail(
                "daemon", "phosra-gate run (pid \(heartbeat.pid)) last wrote its heartbeat \(StatusText.ago(age))",
                fix: restart)
        }
        return .ok(
            "daemon",
            "phosra-gate run \(heartbeat.version) is alive (pid \(heartbeat.pid), heartbeat \(StatusText.ago(age)))")
    }

    // MARK: Listeners and upstreams

    /// `kind`: `dns udp`, `dns tcp`, `proxy` or `transparent`.
    static func listener(_ kind: String, _ address: String, _ probe: Probe) -> DoctorCheck {
        switch probe {
        case .answered:
            return .ok("listener", "\(kind) \(address) answers")
        case .failed(let why):
            return .fail(
                "listener", "\(kind) \(address) does not answer (\(why))",
                fix: "\(restart); is another program on that port (ss -lntup)?")
        }
    }

    static func upstream(_ upstream: String, _ probe: Probe) -> DoctorCheck {
        switch probe {
        case .answered:
            return .ok("upstream", "\(upstream) answers")
        case .failed(let why):
            return .fail(
                "upstream", "\(upstream) does not answer (\(why))",
                fix: "check the gateway's internet connection and the upstream key (a server that answers DNS); "
                    + "names the cache does not hold fail while no upstream answers")
        }
    }

    // MARK: The canary

    /// What the gateway answered for `blocked.phosra-gate.test`.
    enum CanaryAnswer: Equatable, Sendable {
        /// A block answer with the reason `canary` (EDE 15).
        case blocked
        /// Anything else: the rcode and what came with it.
        case notBlocked(String)
    }

    /// Reads a reply to the canary question (asked with EDNS, so a block carries EDE 15).
    static func canaryAnswer(_ reply: [UInt8]) -> CanaryAnswer {
        guard let message = try? DNSMessage.parse(reply) else { return .notBlocked("an answer that cannot be read") }
        let errors = (try? message.edns?.extendedErrors()) ?? []
        if errors.contains(where: { $0.code == .blocked && $0.text == LocalAnswer.canaryReason }) { return .blocked }
        var text = "\(message.rcode)"
        if !message.answers.isEmpty { text += " with \(message.answers.count) records" }
        if let error = errors.first { text += ", \(error)" }
        return .notBlocked(text)
    }

    /// `profile`: the profile the configuration gives `client` (this host's address as the
    /// gateway sees it); `state`: that profile's sync state, when the store has one.
    static func canary(_ answer: CanaryAnswer?, client: String, profile: String, state: SyncState?) -> DoctorCheck {
        let name = "blocked.phosra-gate.test"
        guard let answer else {
            return .skip("canary", "not asked: no DNS listener answered")
        }
        if case .blocked = answer {
            return .ok("canary", "\(name) is blocked for profile \(profile) (asked from \(client))")
        }
        guard case .notBlocked(let what) = answer else { return .skip("canary", "not asked") }
        if profile == Profile.noneName {
            return .skip(
                "canary",
                "asked from \(client), which is in the unfiltered profile none (\(what)): filtering was not tested",
                fix: "ask from a filtered device: dig blocked.phosra-gate.test must say EDE 15 (Blocked): (canary)")
        }
        if let state, state.noActivePolicy, state.noPolicyUnfiltered {
            return .fail(
                "canary", "\(name) is not blocked for profile \(profile) (\(what)): the API has no active policy",
                fix: "turn the child's policy on in Phosra, or set on_no_policy = keep")
        }
        return .fail(
            "canary", "\(name) is not blocked for profile \(profile) (asked from \(client): \(what))",
            fix: "the profile filters nothing: phosra-gate status shows its policy; register it "
                + "(phosra-gate register) or give it a policy file, and check initial_policy")
    }

    // MARK: The clock

    /// The kernel's word on the wall clock (adjtimex(2)).
    enum KernelClock: Equatable, Sendable {
        case synchronised
        case unsynchronised
        case unknown(String)
        /// The wall clock is a test's (`PHOSRA_GATE_TEST_CLOCK`), which the kernel knows nothing of.
        case testClock
    }

    /// adjtimex's return value and status bits → the clock's state: TIME_ERROR or
    /// STA_UNSYNC mean no time service has set the clock.
    static func kernelClock(
        state: Int32, status: Int32, errno: Int32, unsync: Int32, timeError: Int32
    )
        -> KernelClock
    {
        guard state >= 0 else { return .unknown("adjtimex failed, errno \(errno)") }
        return state == timeError || status & unsync != 0 ? .unsynchronised : .synchronised
    }

    static func clock(_ clock: KernelClock) -> DoctorCheck {
        switch clock {
        case .synchronised:
            return .ok("clock", "synchronised (the kernel says a time service set it)")
        case .unsynchronised:
            return .fail(
                "clock", "not synchronised: the kernel says no time service has set the clock",
                fix: "timedatectl status shows the time service; it needs an NTP server it can reach "
                    + "(timedatectl set-ntp true); downtime and schedules follow a wrong time until then")
        case .unknown(let why):
            return .skip("clock", "unknown: \(why)")
        case .testClock:
            return .skip("clock", "not checked: the wall clock is a test clock (PHOSRA_GATE_TEST_CLOCK)")
        }
    }

    // MARK: The API

    /// One registered profile: the API's answer to its key, and what the store says.
    static func api(profile: String, fetch: PolicyFetch, state: SyncState?) -> DoctorCheck {
        let register = "register again: phosra-gate register --profile \(profile) (the last good policy stays in force)"
        if let state, state.revoked {
            return .fail(
                "api", "profile \(profile): the API refuses this gateway's key (revoked)", fix: register)
        }
        switch fetch {
        case .policy, .notModified:
            return .ok("api", "profile \(profile): the API is reachable and accepts the key")
        case .noPolicy:
            return .ok("api", "profile \(profile): the API accepts the key; the child has no active policy")
        case .unauthorized:
            return .fail(
                "api", "profile \(profile): the API refuses this gateway's key (401: revoked, or a passing fault)",
                fix: "ask again in a minute; if it stays, \(register)")
        case .rateLimited(let seconds):
            return .skip(
                "api",
                "profile \(profile): the API is reachable but asked to wait \(seconds) s; the key was not checked")
        case .failed(let why):
            return .fail(
                "api", "profile \(profile): the API did not answer (\(why))",
                fix: "check the gateway's internet connection and the api key; the last good policy stays in force")
        }
    }

    // MARK: The firewall

    /// What `nft list table inet phosra_gate` said.
    enum Listing: Equatable, Sendable {
        case table(String)
        case missing
        /// nft ran but may not read the tables: not root.
        case denied(String)
        /// No nft, or it failed otherwise.
        case unavailable(String)
    }

    /// `expected`: the fingerprint of the table `firewall print` writes for this configuration.
    static func firewall(_ listing: Listing, expected: String) -> DoctorCheck {
        let apply = "phosra-gate firewall apply (or systemctl restart phosra-gate-firewall)"
        switch listing {
        case .missing:
            return .fail(
                "firewall", "table inet phosra_gate is missing: devices can use other DNS servers and go around",
                fix: apply)
        case .denied(let why):
            return .skip("firewall", "not checked: \(why)", fix: "run doctor as root (sudo phosra-gate doctor)")
        case .unavailable(let why):
            return .skip("firewall", "not checked: \(why)", fix: "install nftables")
        case .table(let text):
            guard let found = TableFingerprint.find(in: text) else {
                return .fail(
                    "firewall", "table inet phosra_gate was not written by this version of phosra-gate", fix: apply)
            }
            guard found == expected else {
                return .fail(
                    "firewall",
                    "table inet phosra_gate is out of date: the configuration changed since it was applied",
                    fix: apply)
            }
            return .ok("firewall", "table inet phosra_gate is in place and matches the configuration")
        }
    }

    // MARK: The lists

    /// `newest`: the most recently written list file and when (unix seconds), nil when
    /// there is none; `now`: unix seconds.
    static func lists(newest: (path: String, modified: Int64)?, folders: [String], now: Int64) -> DoctorCheck {
        let update =
            "phosra-gate blocklists update, and make sure the daily timer runs: "
            + "systemctl status phosra-gate-update.timer"
        guard let newest else {
            return .fail("lists", "no list files in \(folders.joined(separator: ", "))", fix: update)
        }
        let age = now - newest.modified
        guard age <= listsMaxAge else {
            return .fail(
                "lists",
                "the newest list file was written \(StatusText.ago(age)) (\(newest.path)): new sites are missed",
                fix: update)
        }
        return .ok("lists", "the newest list file was written \(StatusText.ago(age)) (\(newest.path))")
    }

    // MARK: Notifications

    /// Events waiting longer than this mean the receiver is not taking them.
    static let noticeStale: Int64 = 600

    /// The notification queue (docs/requests-and-notifications.md#notifications): off, a
    /// receiver that has not taken events for 10 minutes, events the bound dropped in the
    /// last day, or fine. `host` is `notify_url`'s, nil when it is not set.
    static func notifications(host: String?, queue: NoticeQueueState?, now: Int64) -> DoctorCheck {
        guard let host else {
            return .skip("notifications", "off (notify_url is not set)")
        }
        guard let queue else { return .skip("notifications", "the store cannot be read") }
        let fix =
            "check notify_url and that \(host) answers; events are kept (up to notify_queue_max) "
            + "and sent when it does"
        if let oldest = queue.oldestWaiting, now - oldest > noticeStale {
            return .fail(
                "notifications",
                "\(queue.waiting) events waiting since \(StatusText.ago(now - oldest)) for \(host)"
                    + (queue.lastError.map { ": " + $0 } ?? ""), fix: fix)
        }
        if let dropped = queue.lastDropped, now - dropped < 86_400 {
            return .fail(
                "notifications",
                "\(queue.dropped) events dropped unsent (the queue was full, last \(StatusText.ago(now - dropped)))",
                fix: fix)
        }
        let last = queue.lastSent.map { ", the last \(StatusText.ago(now - $0))" } ?? ""
        return .ok("notifications", "\(queue.sent) sent to \(host)\(last); \(queue.waiting) waiting")
    }

    /// The shared store as the running daemon last found it (docs/two-gateways.md):
    /// off, not connected yet, unreachable (the error, and the changes that wait), or
    /// connected. `place` is `shared_store`'s host, port and database, nil when off.
    static func sharedStore(
        place: String?, state: SharedStateRow?, waiting: Int, alive: Bool, now: Int64
    )
        -> DoctorCheck
    {
        guard let place else { return .skip("shared_store", "off (shared_store is not set)") }
        guard alive, let state, state.since > 0 else {
            return .skip("shared_store", "not connected yet: the daemon connects when it runs")
        }
        guard state.connected else {
            return .fail(
                "shared_store",
                "\(place) unreachable since \(StatusText.ago(now - state.since))"
                    + (state.error.map { ": " + $0 } ?? "") + "; \(waiting) changes waiting here",
                fix:
                    "check the database server and the way to it, and shared_store_password_file; meanwhile this "
                    + "gateway enforces the last shared state, and the changes go when it is back")
        }
        return .ok(
            "shared_store",
            "connected to \(place) since \(StatusText.ago(now - state.since)); \(waiting) changes waiting")
    }

    // MARK: The page

    /// How long before it expires a certificate is said to need renewing.
    static let certificateRenewal: Int64 = 30 * 86_400

    /// The page's certificate as `doctor` loaded it with its key.
    enum WebCertificate: Equatable, Sendable {
        /// No file yet: the gateway makes one when the page starts.
        case absent
        case unreadable(String)
        case loaded(fingerprint: String, notAfter: Int64)
    }

    /// `parents`: the certificate is `web_tls_cert`, not the gateway's own; `alive`: `run`
    /// holds the state directory; `now`: unix seconds.
    static func web(
        passwordSet: Bool, alive: Bool, path: String, parents: Bool, certificate: WebCertificate, now: Int64
    ) -> DoctorCheck {
        guard passwordSet else {
            return .skip(
                "web", "the parent's page is off: no password is set",
                fix: "sudo phosra-gate web-password (docs/parent-page.md)")
        }
        let remake =
            parents
            ? "give web_tls_cert and web_tls_key a certificate and its key that load, then restart"
            : "remove \(path) and the web-key.pem beside it and restart: the gateway makes a new one "
                + "(compare its new fingerprint in the browser)"
        switch certificate {
        case .absent:
            guard alive else {
                return .skip("web", "no certificate yet at \(path): run makes it when the page starts")
            }
            return .fail(
                "web", "the page should be serving but there is no certificate at \(path)",
                fix: "journalctl -u phosra-gate says why the page did not start (event=web_not_started)")
        case .unreadable(let why):
            return .fail("web", "the page's certificate does not load: \(why)", fix: remake)
        case .loaded(let fingerprint, let notAfter):
            let stamp = "\(path) sha256=\(fingerprint)"
            guard notAfter > now else {
                return .fail(
                    "web", "the page's certificate \(stamp) expired \(StatusText.rfc3339(notAfter))", fix: remake)
            }
            guard notAfter - now > certificateRenewal else {
                return .fail(
                    "web",
                    "the page's certificate \(stamp) expires \(StatusText.rfc3339(notAfter)): browsers will refuse it",
                    fix: remake)
            }
            return .ok("web", "certificate \(stamp), valid until \(StatusText.rfc3339(notAfter))")
        }
    }
}
