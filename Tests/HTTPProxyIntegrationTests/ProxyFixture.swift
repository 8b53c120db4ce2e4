import EventLoop
import Foundation
import GateHarness
import SystemIO
import TestSupport

/// The real `phosra-gate run` with its HTTP proxy on a free loopback port, against a
/// dnsmasq upstream that knows the test names and a local HTTP origin (and an HTTPS one
/// with the test CA). Category lists: adult = `adult.example`.
final class ProxyFixture: @unchecked Sendable {
    // Sendable: every stored property is a `let`; the servers guard their own state.
    let scratch: ScratchDirectory
    let dns: DnsmasqUpstream
    /// Plain HTTP origin; answers every request with what it saw (method, target, headers).
    let origin: TestHTTPServer
    let proxyPort: UInt16
    var lists: String { scratch.path("lists") }

    /// `origin.test`, `dot.test` (the test certificate's name), `open.test` and the
    /// safe-search target → 127.0.0.1; `edge.test` and `news.test` → 127.0.0.61 (where a
    /// test listens on port 443); `www.google.com` → 127.0.0.98 (where nothing listens: a
    /// proxy that connected there instead of the rewrite target would fail);
    /// `adult.example` and `www.reddit.com` resolve too, so only the policy stops them.
    init() throws {
        scratch = try ScratchDirectory("pg-proxy")
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        dns = try DnsmasqUpstream([
            "--host-record=origin.test,127.0.0.1", "--host-record=dot.test,127.0.0.1",
            "--host-record=open.test,127.0.0.1", "--host-record=forcesafesearch.google.com,127.0.0.1",
            "--host-record=www.google.com,127.0.0.98", "--address=/adult.example/127.0.0.1",
            "--host-record=www.reddit.com,127.0.0.1", "--host-record=edge.test,127.0.0.61",
            "--host-record=news.test,127.0.0.61", "--local=/v6only.test/", "--host-record=v6only.test,::1",
            "--host-record=zero.test,0.0.0.0", "--host-record=mixed.test,127.0.0.61,127.0.0.1",
        ])
        origin = try TestHTTPServer { request in
            let headers = request.headers.map { "\($0.0): \($0.1)" }.joined(separator: "\n")
            return .respond(.init(status: 200, text: "origin saw \(request.method) \(request.target)\n\(headers)\n"))
        }
        proxyPort = FreePort.tcpAndUDP()
    }

    var proxy: String { "http://127.0.0.1:\(proxyPort)" }

    /// `run` with `policy`, the proxy on `proxyPort`, CONNECT and plain HTTP allowed to the
    /// origin's port, and (unless `localOrigins` is false) to the loopback addresses the test
    /// origins listen on; its wall clock starts at `wallClock` when given (the time rules' tests).
    func start(
        _ policy: String = ProxyFixture.policy(), _ extra: [String] = [], connectPorts: [UInt16] = [],
        wallClock: String? = nil, localOrigins: Bool = true, httpPorts: [UInt16] = []
    ) throws -> GateRun {
        let words = try words(
            policy, extra, connectPorts: connectPorts, localOrigins: localOrigins, httpPorts: httpPorts)
        let gate = try GateRun(words, scratch: scratch, environment: wallClock.map(GateRun.wallClock) ?? [:])
        guard gate.daemon.waitFor("event=listening service=proxy tcp=127.0.0.1:\(proxyPort)", timeout: 5) else {
            throw ProxyClientError(message: "no proxy listener:\n\(gate.log)")
        }
        return gate
    }

    /// The same daemon in the test's process, on a clock the test moves (`InProcessGate`);
    /// ready when it returns.
    func startInProcess(
        _ policy: String = ProxyFixture.policy(), _ extra: [String] = [], connectPorts: [UInt16] = []
    ) throws -> InProcessGate {
        try InProcessGate(words(policy, extra, connectPorts: connectPorts), scratch: scratch)
    }

    private func words(
        _ policy: String, _ extra: [String], connectPorts: [UInt16], localOrigins: Bool = true,
        httpPorts: [UInt16] = []
    ) throws -> [String] {
        let path = try scratch.write("policy.json", policy)
        let ports = ([origin.port] + connectPorts).map(String.init).joined(separator: ",")
        var words = [
            "--policy", path, "--lists", lists, "--upstream", dns.spec, "--proxy-listen", "127.0.0.1:\(proxyPort)",
        ]
        if !extra.contains("--connect-ports") { words += ["--connect-ports", ports] }
        if !extra.contains("--http-ports") {
            words += ["--http-ports", ([80, origin.port] + httpPorts).map(String.init).joined(separator: ",")]
        }
        if localOrigins { words.append("--allow-local-destinations") }
        return words + extra
    }

    /// Safe search on, `reddit.com` blocked, the adult category selected.
    static func policy(
        blocked: [String] = ["reddit.com"], screenTime: String = #""daily_limit_minutes": 0"#,
        version: Int = 3
    ) -> String {
        PolicyDocuments.json(
            safeSearch: true, blocked: blocked, categories: ["adult"], screenTime: screenTime, version: version)
    }

    /// Replaces the watched policy file by rename, as an editor or the sync would.
    func replacePolicy(_ policy: String) throws {
        let temporary = try scratch.write("policy.json.new", policy)
        _ = rename(temporary, scratch.path("policy.json"))
    }

    /// `curl -x proxy ARGS…`.
    func curl(_ arguments: [String], timeout: Int = 8) throws -> CurlResult {
        try Curl.run(["-x", proxy] + arguments, timeout: timeout)
    }

    /// A raw client on the proxy port.
    func client(timeout: TimeInterval = 5) throws -> ProxyClient { try ProxyClient(port: proxyPort, timeout: timeout) }

    /// A raw client whose CONNECT to `host:port` was answered `200`.
    func tunnel(to host: String, port: UInt16? = nil, timeout: TimeInterval = 5) throws -> ProxyClient {
        let client = try client(timeout: timeout)
        client.send("CONNECT \(host):\(port ?? origin.port) HTTP/1.1\r\nHost: \(host)\r\n\r\n")
        let answer = client.read(until: "\r\n\r\n")
        guard answer.hasPrefix("HTTP/1.1 200 Connection established\r\n") else {
            throw ProxyClientError(message: "CONNECT \(host) answered: \(answer)")
        }
        return client
    }

    /// The hits in the store after the daemon stopped: (domain, reason, source, count).
    func storedHits(_ gate: GateRun) throws -> [HitSummary] {
        try HitSummary.read(stateDirectory: gate.stateDirectory)
    }

    func storedHits(_ gate: InProcessGate) throws -> [HitSummary] {
        try HitSummary.read(stateDirectory: gate.stateDirectory)
    }
}

/// `body`'s result and how long it took, in seconds (on the monotonic clock).
func timed<T>(_ body: () throws -> T) rethrows -> (T, TimeInterval) {
    let clock = SystemClock()
    let start = clock.now()
    let result = try body()
    return (result, TimeInterval(clock.now() - start) / 1e9)
}
