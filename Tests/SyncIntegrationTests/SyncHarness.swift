import EventLoop
import Foundation
import GateHarness
import TestSupport
import Testing

/// What the fault and durability tests share: a fake Phosra API (HTTP, or HTTPS with a
/// test CA) with one child and a time-independent policy that blocks `reddit.com`, a fake
/// upstream that answers every forwarded name with `upstreamAnswer` (so "unfiltered" is
/// visible as a real answer), a state directory for the real `phosra-gate`, and helpers
/// for what a user sees (`status --json`, `hits`, dig) and what the API received.
final class SyncHarness: @unchecked Sendable {
    // Sendable: every stored property is a `let`; the fake API and upstream guard their own state.
    let scratch: ScratchDirectory
    let api: FakePhosraAPI
    let certificates: TestCertificates?
    let upstream: FakeUDPUpstream
    let childID: String
    let policyID: String
    let state: String
    let lists: String

    /// What the fake upstream answers for any forwarded name.
    static let upstreamAnswer = "192.0.2.77"
    /// The reason text of the API policy's one blocked domain.
    static let redditBlock = "15 (Blocked): (blocked_domain:reddit.com)"

    /// `change` edits the API policy (version 42, moderate, safe search, reddit.com
    /// blocked, no schedule) before it is added.
    init(https: Bool = false, change: (inout FakePolicy) -> Void = { _ in }) throws {
        scratch = try ScratchDirectory("pg-syncit")
        certificates = https ? try TestCertificates() : nil
        api = try FakePhosraAPI(certificates: certificates)
        childID = api.addChild(age: 10)
        var policy = FakePolicy.quickSetup(age: 10)
        policy.screenTime.schedule = nil
        policy.webFilter.blockedDomains = ["reddit.com"]
        change(&policy)
        policyID = api.addPolicy(policy, to: childID)
        state = scratch.path("state")
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        lists = scratch.path("lists")
        upstream = try FakeUDPUpstream { query in
            [.send(FakeDNS.reply(to: query, addresses: [SyncHarness.upstreamAnswer], ttl: 1))]
        }
    }

    // MARK: The real binary

    /// `phosra-gate register` with the token from a file (with `--ca-file` of the test CA
    /// over HTTPS unless `trustTestCA` is false).
    func register(name: String = "test gateway", extra: [String] = [], trustTestCA: Bool = true) throws -> ProgramOutput
    {
        let tokenFile = try scratch.write("token", FakePhosraAPI.defaultParentToken + "\n")
        var words = [
            "register", "--api", api.baseURL, "--child-id", childID, "--parent-token-file", tokenFile,
            "--state-dir", state, "--name", name,
        ]
        if let certificates, trustTestCA { words += ["--ca-file", certificates.caFile] }
        return try GateCommand.run(words + extra)
    }

    /// `register` that must succeed.
    func registered() throws {
        let result = try register()
        try #require(result.status == 0, "register failed: \(result.stderr)")
    }

    /// `phosra-gate run` with the intervals shrunk: `flags` override or add (`--key value`),
    /// `removing` drops a default flag (e.g. `--ca-file`). Polls every 2 s, reports every
    /// second, full fetch hourly, backoff at most 2 s.
    /// `wallClock`: where the daemon's wall clock starts (`GateRun.wallClock`), if not now.
    func run(
        _ flags: [String: String] = [:], removing: [String] = [], port: UInt16? = nil,
        waitReady: Bool = true, wallClock: String? = nil
    ) throws -> GateRun {
        try GateRun(
            words(flags, removing: removing), scratch: scratch, port: port, waitReady: waitReady,
            environment: wallClock.map(GateRun.wallClock) ?? [:])
    }

    /// The same daemon in the test's process, on a clock the test moves (`InProcessGate`).
    func runInProcess(_ flags: [String: String] = [:]) throws -> InProcessGate {
        try InProcessGate(words(flags), scratch: scratch)
    }

    private func words(_ flags: [String: String], removing: [String] = []) -> [String] {
        var settings = [
            "--lists": lists, "--state-dir": state, "--upstream": upstream.spec, "--api": api.baseURL,
            "--poll-interval": "2s", "--report-interval": "1s", "--full-sync-interval": "1h",
            "--backoff-max": "2s",
        ]
        if let certificates { settings["--ca-file"] = certificates.caFile }
        settings.merge(flags) { $1 }
        for flag in removing { settings[flag] = nil }
        return settings.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
    }

    /// Any other command on this state directory (its wall clock at `wallClock` when given).
    func command(_ words: [String], stdin: String? = nil, wallClock: String? = nil) throws -> ProgramOutput {
        try GateCommand.run(
            words + ["--state-dir", state], stdin: stdin, environment: wallClock.map(GateRun.wallClock) ?? [:])
    }

    /// `phosra-gate status --json`, parsed (nil when it failed or printed no JSON).
    func status() -> TestJSON? {
        guard let result = try? command(["status", "--json"]), result.status == 0 else { return nil }
        return try? TestJSON.parse(result.stdout)
    }

    /// The `default` profile of `status --json`.
    func profileStatus() -> TestJSON? {
        status()?["profiles"]?.array?.first { $0["profile"]?.string == "default" }
    }

    /// `status` (text).
    func statusText() -> String {
        guard let result = try? command(["status"]) else { return "" }
        return result.stdout + result.stderr
    }

    /// The stored device key (to check it is kept, and never printed).
    var deviceKey: String? {
        (try? String(contentsOfFile: state + "/devices/default.key", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: What the API received

    /// Payloads of the `blocked_attempt` reports the fake stored, in order (resent copies included).
    var blockedAttempts: [TestJSON] {
        api.reports.filter { $0.reportType == "blocked_attempt" }.map(\.payload)
    }

    /// The `blocked_attempt` payloads with one copy per `batch_id` (the first).
    func uniqueBatches() -> [TestJSON] {
        var seen = Set<String>()
        return blockedAttempts.filter { seen.insert($0["batch_id"]?.string ?? "").inserted }
    }

    /// After de-duplicating by `batch_id`: the summed `count` per "domain client".
    func deliveredCounts() -> [String: Int] {
        var counts: [String: Int] = [:]
        for batch in uniqueBatches() {
            for event in batch["events"]?.array ?? [] {
                counts["\(event["domain"]?.string ?? "?") \(event["client"]?.string ?? "?")", default: 0] +=
                    event["count"]?.int ?? 0
            }
        }
        return counts
    }

    /// `batch_id`s received more than once (a batch resent after a lost reply).
    func resentBatchIDs() -> [String] {
        let ids = blockedAttempts.compactMap { $0["batch_id"]?.string }
        return Set(ids.filter { id in ids.filter { $0 == id }.count > 1 }).sorted()
    }

    /// `enforcement_status` payloads, in order.
    var enforcementReports: [TestJSON] {
        api.reports.filter { $0.reportType == "enforcement_status" }.map(\.payload)
    }

    /// Policy requests the fake recorded (any status).
    var policyRequests: [FakePhosraAPI.ReceivedRequest] { api.requests(to: .policy) }

    // MARK: Waiting

    /// Waits until `condition` holds (asking every 50 ms: it often runs `status`), at most
    /// `timeout` seconds.
    @discardableResult
    func eventually(_ timeout: TimeInterval = 10, _ condition: () throws -> Bool) rethrows -> Bool {
        try waitUntil(timeout: .seconds(timeout), interval: 50_000_000, condition)
    }

    /// Waits until `gate` has applied (and acknowledged) `version`.
    func waitApplied(_ gate: GateRun, version: Int = 42, timeout: TimeInterval = 10) -> Bool {
        waitApplied(log: { gate.log }, version: version, timeout: timeout)
    }

    func waitApplied(_ gate: InProcessGate, version: Int = 42, timeout: TimeInterval = 10) -> Bool {
        waitApplied(log: { gate.log }, version: version, timeout: timeout)
    }

    private func waitApplied(log: () -> String, version: Int, timeout: TimeInterval) -> Bool {
        eventually(timeout) {
            log().contains("event=policy_applied profile=default version=\(version) ")
                && api.acks.contains { $0.version == version }
        }
    }
}

/// What a dig answer means to a user of the gateway.
extension DigAnswer {
    /// NXDOMAIN with EDE 15 (the default block mode).
    var isBlocked: Bool { status == "NXDOMAIN" && extendedErrors.contains { $0.hasPrefix("15 (Blocked)") } }
    /// Forwarded and answered by the fake upstream.
    var isForwarded: Bool { status == "NOERROR" && answerData.contains(SyncHarness.upstreamAnswer) }
}

extension GateRun {
    /// `dig` from another loopback address (a second LAN client).
    func dig(_ name: String, _ type: String = "A", from client: String) throws -> DigAnswer {
        try dig(name, type, ["-b", client])
    }

    /// Stops with SIGKILL: no drain, no last flush.
    func killHard() {
        daemon.signal(SIGKILL)
        _ = daemon.waitForExit(timeout: 5)
    }
}
