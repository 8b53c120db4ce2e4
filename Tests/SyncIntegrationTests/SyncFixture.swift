import EventLoop
import Foundation
import TestSupport
import Testing

/// A fake Phosra API with one child and a time-independent policy, a registered gateway
/// state directory, and helpers to start the real `run` against them.
final class SyncFixture: @unchecked Sendable {
    // Sendable: set up in init; `registerOutput` is written only by the test thread.
    let scratch: ScratchDirectory
    let api: FakePhosraAPI
    let childID: String
    let policyID: String
    let state: String
    let lists: String
    private(set) var registerOutput = ""

    init(https: Bool = false) throws {
        scratch = try ScratchDirectory()
        api = https ? try FakePhosraAPI(certificates: TestCertificates()) : try FakePhosraAPI()
        childID = api.addChild(age: 10)
        var policy = FakePolicy.quickSetup(age: 10)
        policy.screenTime.schedule = nil
        policy.webFilter.blockedDomains = ["reddit.com"]
        policyID = api.addPolicy(policy, to: childID)
        state = scratch.path("state")
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        lists = scratch.path("lists")
    }

    /// `phosra-gate register` through the real binary; the token comes on standard input.
    func register(extra: [String] = []) throws -> ProgramOutput {
        let tokenFile = try scratch.write("token", FakePhosraAPI.defaultParentToken + "\n")
        let result = try GateCommand.run(
            [
                "register", "--api", api.baseURL, "--child-id", childID, "--parent-token-file", tokenFile,
                "--state-dir", state, "--name", "test gateway",
            ] + extra)
        registerOutput = result.stdout + result.stderr
        return result
    }

    /// `run` with intervals shrunk so tests take seconds.
    func run(_ extra: [String] = [], waitReady: Bool = true, port: UInt16? = nil) throws -> GateRun {
        try GateRun(
            [
                "--lists", lists, "--state-dir", state, "--upstream", "127.0.0.1:9", "--api", api.baseURL,
                "--poll-interval", "1s", "--report-interval", "1s", "--full-sync-interval", "1h",
                "--backoff-max", "2s",
            ] + extra, scratch: scratch, port: port, waitReady: waitReady)
    }

    /// Waits until `condition` holds (polling), at most `timeout` seconds.
    @discardableResult
    func eventually(_ timeout: TimeInterval = 8, _ condition: () throws -> Bool) rethrows -> Bool {
        try waitUntil(timeout: .seconds(timeout), interval: 50_000_000, condition)
    }

    /// The device key the fake issued (for asserting it never leaks).
    var deviceKey: String? {
        (try? String(contentsOfFile: state + "/devices/default.key", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
