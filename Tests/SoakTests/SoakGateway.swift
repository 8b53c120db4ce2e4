import Foundation
import TestSupport

/// The home the soak runs: dnsmasq as the upstream, a plain-HTTP origin, the fake Phosra
/// API, and the real `phosra-gate run` with two profiles: `local` (a watched policy file,
/// device 127.0.0.1) and `synced` (registered with the API, device 127.0.0.2).
final class SoakGateway: @unchecked Sendable {
    let settings: SoakSettings
    let scratch: ScratchDirectory
    let upstream: DnsmasqUpstream
    let origin: TestHTTPServer
    let api: FakePhosraAPI
    let childID: String
    let policyID: String
    let proxyPort = FreePort.tcpAndUDP()
    let metricsPort = FreePort.tcpAndUDP()
    let policyFile: String
    private(set) var gate: GateRun!

    /// The API's policy version the soak starts from (FakePolicy.quickSetup for age 10).
    static let firstAPIVersion = 42

    init(_ settings: SoakSettings) throws {
        self.settings = settings
        scratch = try ScratchDirectory("pg-soak")
        upstream = try DnsmasqUpstream(SoakNames.upstreamRecords, localTTL: 5)
        origin = try TestHTTPServer(idleTimeout: .seconds(30)) { request in
            .respond(.init(status: 200, text: "origin saw \(request.method) \(request.target)\n"))
        }
        api = try FakePhosraAPI()
        childID = api.addChild(age: 10)
        var policy = FakePolicy.quickSetup(age: 10)
        policy.screenTime.schedule = nil
        policy.webFilter.blockedDomains = [SoakNames.hit, "always.blocked.test"]
        policyID = api.addPolicy(policy, to: childID)
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        policyFile = scratch.path("local.json")
        try scratch.write("local.json", Self.localPolicy(blocksA: true, version: 1))
    }

    /// The local profile's policy: A blocks `swap-a.test`, B `swap-b.test`; both block
    /// `always.blocked.test` and the adult category.
    static func localPolicy(blocksA: Bool, version: Int) -> String {
        PolicyDocuments.json(
            blocked: ["always.blocked.test", blocksA ? SoakNames.swapA : SoakNames.swapB], categories: ["adult"],
            version: version)
    }

    var state: String { scratch.path("state") }

    /// Registers profile `synced`, then starts `run` and waits until both profiles enforce
    /// their policies and the synced one has acknowledged its version.
    func start() throws -> GateRun {
        let config = try scratch.write(
            "soak.conf",
            """
            default_profile = none
            [profile local]
            clients = \(SoakNames.localClient)
            policy = \(policyFile)
            [profile synced]
            clients = \(SoakNames.syncedClient)
            child_id = \(childID)
            """)
        let token = try scratch.write("token", FakePhosraAPI.defaultParentToken + "\n")
        let registered = try Program.run(
            settings.binary,
            [
                "register", "--api", api.baseURL, "--parent-token-file", token, "--state-dir", state, "--name",
                "soak", "--profile", "synced", "--config", config,
            ])
        guard registered.status == 0 else { throw SoakError("register failed: \(registered.stderr)") }

        let ports = "\(origin.port)"
        let gate = try GateRun(
            [
                "--config", config, "--lists", scratch.path("lists"), "--state-dir", state, "--upstream",
                upstream.spec, "--api", api.baseURL, "--poll-interval", "2s", "--report-interval", "1s",
                "--full-sync-interval", "1m", "--backoff-max", "2s", "--proxy-listen", "127.0.0.1:\(proxyPort)",
                "--connect-ports", "443,\(ports)", "--http-ports", "80,\(ports)", "--allow-local-destinations",
                "--cache-size", "2000", "--metrics-listen", "127.0.0.1:\(metricsPort)",
            ], scratch: scratch, binary: settings.binary)
        self.gate = gate
        guard gate.daemon.waitFor("event=listening service=proxy", timeout: 10) else {
            throw SoakError("no proxy listener:\n\(gate.log)")
        }
        let applied = waitUntil(timeout: .seconds(20), interval: 100_000_000) {
            api.acks.contains { $0.version == Self.firstAPIVersion }
        }
        guard applied else { throw SoakError("the synced profile never acknowledged its policy:\n\(gate.log)") }
        return gate
    }

    var pid: Int32 { gate.daemon.pid }
    var dnsPort: UInt16 { gate.port }
}
