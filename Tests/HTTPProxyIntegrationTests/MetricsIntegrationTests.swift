import Foundation
import TestSupport
import Testing

/// `/metrics` (docs/operations.md#metrics) scraped from the real daemon after a known
/// load through both doors, checked by Prometheus's own `promtool check metrics`, and its
/// values compared with the load sent.
@Suite(.serialized, .blocking) struct MetricsIntegrationTests {
    let fixture: ProxyFixture

    init() throws { fixture = try ProxyFixture() }

    @Test func theScrapeCountsWhatWasSentAndPassesPromtool() throws {
        let metricsPort = FreePort.tcpAndUDP()
        let gate = try fixture.start(ProxyFixture.policy(), ["--metrics-listen", "127.0.0.1:\(metricsPort)"])
        #expect(gate.daemon.waitFor("event=listening service=metrics", timeout: 5), "\(gate.log)")
        for _ in 0..<3 { #expect(try gate.dig("origin.test").status == "NOERROR") }
        for _ in 0..<2 { #expect(try gate.dig("www.reddit.com").status == "NXDOMAIN") }
        #expect(try gate.dig("x.adult.example", "AAAA").status == "NXDOMAIN")
        // Port 443 is not among this fixture's connect_ports: refused for its port.
        let blocked = try fixture.curl(["-sS", "https://www.reddit.com/"])
        #expect(blocked.connectStatus == 403)
        let allowed = try fixture.curl(["-sS", "http://origin.test:\(fixture.origin.port)/page"])
        #expect(allowed.status == 200)

        let scrape = try MetricsScrape(port: metricsPort)
        let page = scrape.page
        let check = try Program.run("/usr/bin/promtool", ["check", "metrics"], stdin: page)
        #expect(check.status == 0, "promtool: \(check.stdout)\(check.stderr)\n\(page)")

        #expect(scrape[#"phosra_gate_dns_queries_total{type="A",outcome="noerror"}"#] == 3, "\(page)")
        #expect(scrape[#"phosra_gate_dns_queries_total{type="A",outcome="nxdomain"}"#] == 2)
        #expect(scrape[#"phosra_gate_dns_queries_total{type="AAAA",outcome="nxdomain"}"#] == 1)
        #expect(
            scrape[#"phosra_gate_blocks_total{reason="blocked_domain",category="",profile="default",source="dns"}"#]
                == 2)
        #expect(
            scrape[#"phosra_gate_blocks_total{reason="category",category="adult",profile="default",source="dns"}"#]
                == 1)
        #expect(
            scrape[#"phosra_gate_blocks_total{reason="port",category="",profile="default",source="proxy"}"#]
                == 1)
        // Six DNS queries and two proxy requests; the proxy's own lookup does not count.
        #expect(scrape[#"phosra_gate_queries_total{profile="default"}"#] == 8)
        #expect(scrape["phosra_gate_proxy_connections_total"] == 2)
        #expect(scrape["phosra_gate_cache_misses_total"].map { $0 >= 1 } == true)
        #expect(scrape[#"phosra_gate_upstream_latency_seconds_count{upstream="\#(fixture.dns.spec)"}"#] != nil)
        #expect(scrape["phosra_gate_list_names"].map { $0 >= 1 } == true)
        #expect(scrape["phosra_gate_resident_memory_bytes"].map { $0 > 1_000_000 } == true)
        #expect(scrape["phosra_gate_open_files"].map { $0 > 3 } == true)
        #expect(!page.contains("127.0.0.1\""), "no client address is a label")
        #expect(!page.contains("reddit"), "no queried name is a label")

        let other = try Curl.run(["-o", "/dev/null", "http://127.0.0.1:\(metricsPort)/other"])
        #expect(other.status == 404)
        gate.daemon.stop()
    }

    /// Each thread of the running daemon by name, with its scheduling policy (0 normal,
    /// 5 SCHED_IDLE).
    func threadPolicies(_ pid: Int32) -> [String: Int] {
        var policies: [String: Int] = [:]
        for thread in ProcessThread.all(of: pid) { policies[thread.name] = thread.policy }
        return policies
    }

    /// Storing hits, syncing and serving /metrics take a core only when no loop wants it:
    /// the structural fix for the DNS tail (docs/performance.md#background-threads). The
    /// notifier does not: its deadlines are real time.
    @Test func backgroundThreadsRunInSchedIdleAndTheLoopsDoNot() throws {
        let metricsPort = FreePort.tcpAndUDP()
        let gate = try fixture.start(
            ProxyFixture.policy(),
            ["--metrics-listen", "127.0.0.1:\(metricsPort)", "--notify-url", "http://127.0.0.1:9/hook"])
        #expect(gate.daemon.waitFor("event=listening service=metrics", timeout: 5), "\(gate.log)")
        // A new thread takes its class and then its name first thing, a moment after the
        // log line: wait for the names.
        let pid = gate.daemon.process.processIdentifier
        _ = waitUntil {
            let named = threadPolicies(pid)
            return named["pg-sync"] != nil && named["pg-metrics"] != nil && named["pg-notify"] != nil
        }
        let policies = threadPolicies(pid)
        #expect(policies["pg-sync"] == 5, "\(policies)")
        #expect(policies["pg-metrics"] == 5, "\(policies)")
        #expect(policies["pg-notify"] == 0, "\(policies)")
        let loops = policies.filter { $0.key.hasPrefix("pg-dns-") }
        #expect(!loops.isEmpty && loops.values.allSatisfy { $0 == 0 }, "\(policies)")
        gate.daemon.stop()
    }

    @Test func aMetricsAddressOffLoopbackIsRefused() throws {
        let result = try GateCommand.run(
            [
                "run", "--policy", try fixture.scratch.write("p.json", ProxyFixture.policy()), "--metrics-listen",
                "0.0.0.0:9100", "--dns-listen", "127.0.0.1:\(FreePort.tcpAndUDP())", "--proxy-listen=",
                "--state-dir", fixture.scratch.path("state-refused"), "--lists", fixture.lists,
            ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("--metrics-listen"), "\(result.stderr)")
        #expect(result.stderr.contains("0.0.0.0:9100 is not a loopback address"), "\(result.stderr)")
    }
}
