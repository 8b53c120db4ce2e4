import Foundation
import TestSupport
import Testing

/// `blocklists update` while `run` answers a steady DNS load (dnsperf): the new list is
/// swapped into the running daemon without a restart and without one lost or failed
/// query, and the names it adds are blocked from then on.
@Suite(.serialized, .blocking) struct ListUpdateIntegrationTests {
    /// A service catalogue downloaded by `blocklists update` reaches the running daemon: an
    /// app the policy blocks, unknown before, is blocked as a service after.
    @Test func aNewServiceCatalogueIsSwappedIn() throws {
        let scratch = try ScratchDirectory()
        let server = try TestListServer()
        try scratch.write("lists/adult/curated.txt", "curated-adult.example\n")
        try scratch.write("manifest.json", server.manifest([(nil, "Apps", "apps.json", "services")]))
        server.set(
            "apps.json",
            .list(
                #"{"format": 1, "services": [{"id": "chatter", "name": "Chatter", "kind": "social", "#
                    + #""bundle_ids": {"ios": ["app.chatter"]}, "domains": ["chatter.example"], "source": "test"}]}"#,
                etag: #""a1""#))
        let upstream = try FakeUDPUpstream { query in
            [.send(FakeDNS.reply(to: query, addresses: ["203.0.113.7"], ttl: 0))]
        }
        let policy = try scratch.write(
            "policy.json", #"{"version": 2, "content_filter": {"blocked_apps": ["app.chatter"]}}"#)
        let gate = try GateRun(
            ["--policy", policy, "--lists", scratch.path("lists"), "--upstream", upstream.spec], scratch: scratch)
        defer { gate.daemon.stop() }
        #expect(try gate.dig("www.chatter.example").status == "NOERROR", "no catalogue yet")
        let update = try GateCommand.run([
            "blocklists", "update", "--manifest", scratch.path("manifest.json"), "--lists", scratch.path("lists"),
            "--state-dir", gate.stateDirectory, "--ca-file", server.certificates.caFile,
        ])
        #expect(update.status == 0, "\(update.stderr)")
        #expect(gate.daemon.waitFor("event=lists_updated", timeout: 5), "\(gate.log)")
        #expect(gate.log.contains("services=1"), "\(gate.log)")
        #expect(try gate.dig("www.chatter.example").extendedErrors == ["15 (Blocked): (service:chatter)"])
    }

    @Test
    func aNewListIsSwappedInUnderLoadWithoutAFailedQuery() throws {
        let scratch = try ScratchDirectory()
        let server = try TestListServer()
        try scratch.write("lists/adult/curated.txt", "curated-adult.example\n")
        // A packaged list two days old, for the metrics' list age.
        let old = try scratch.write("lists/gaming/curated.txt", "games.example\n")
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -172_800)], ofItemAtPath: old)
        try scratch.write(
            "manifest.json", server.manifest([("adult", "Later", "later.txt", "domains")]))
        // Big enough that compiling and mapping it takes a while.
        let names = (0..<50_000).map { "n\($0).later.example\n" }.joined()
        server.set("later.txt", .list(names, etag: #""big""#))
        // TTL 0: nothing is cached, so every allowed query reaches the upstream (and shows the load).
        let upstream = try FakeUDPUpstream { query in
            [.send(FakeDNS.reply(to: query, addresses: ["203.0.113.7"], ttl: 0))]
        }
        let policy = try scratch.write("policy.json", PolicyDocuments.json(categories: ["adult"]))
        let metricsPort = FreePort.tcpAndUDP()
        let gate = try GateRun(
            [
                "--policy", policy, "--lists", scratch.path("lists"), "--upstream", upstream.spec,
                "--rate-limit", "0", "--metrics-listen", "127.0.0.1:\(metricsPort)",
            ], scratch: scratch)
        defer { gate.daemon.stop() }
        #expect(try gate.dig("n123.later.example").status == "NOERROR")
        #expect(try gate.dig("www.curated-adult.example").status == "NXDOMAIN")

        let queries = try scratch.write(
            "queries",
            "allowed.example A\nn123.later.example A\nwww.curated-adult.example A\nn49999.later.example A\n")
        let load = try DNSPerfLoad(port: gate.port, queries: queries, seconds: 6, qps: 400)
        // The update starts once the load is well under way (the upstream has seen it).
        let before = upstream.queries.count
        #expect(waitUntil(interval: 10_000_000) { upstream.queries.count >= before + 200 }, "dnsperf is sending")

        let update = try GateCommand.run([
            "blocklists", "update", "--manifest", scratch.path("manifest.json"), "--lists", scratch.path("lists"),
            "--state-dir", gate.stateDirectory, "--ca-file", server.certificates.caFile,
        ])
        #expect(update.status == 0, "\(update.stderr)")
        #expect(update.stdout.contains("adult/later.txt: updated, 50000 names (new)"))
        #expect(gate.daemon.waitFor("event=lists_updated", timeout: 5), "\(gate.log)")

        let stats = load.finish()
        let report = stats.description
        #expect(stats.completed > 1000, "\(report)")
        #expect(stats.lost == 0, "\(report)")
        #expect(Set(stats.codes.keys).isSubset(of: ["NOERROR", "NXDOMAIN"]), "\(report)")
        // Some queries for the new name were answered before the swap, some blocked after.
        #expect((stats.codes["NXDOMAIN"] ?? 0) > (stats.completed / 4) + 100, "\(report)")

        #expect(try gate.dig("n123.later.example").status == "NXDOMAIN")
        #expect(try gate.dig("allowed.example").status == "NOERROR")
        #expect(gate.log.contains("names=50002"), "the running daemon holds the curated and the downloaded names")
        #expect(gate.log.occurrences(of: "event=listening service=dns") < 2, "no restart")
        #expect(!gate.log.contains("event=lists warning"), "the daemon mapped the file the update compiled")
        // The metrics count the lists in force, and the new file's age.
        let scrape = try MetricsScrape(port: metricsPort)
        let page = scrape.page
        #expect(page.contains("\nphosra_gate_list_names 50002\n"), "\(page)")
        func age(_ category: String) -> Int? {
            scrape[#"phosra_gate_list_age_seconds{category="\#(category)"}"#].map { Int($0) }
        }
        #expect(age("adult").map { $0 < 60 } == true, "\(page)")
        #expect(age("gaming").map { (172_800..<173_400).contains($0) } == true, "\(page)")

        // A list put in the state directory by hand and the marker rewritten: the daemon
        // builds the lists itself (the compiled file is stale) and swaps them in too.
        let state = "state-\(gate.port)"
        #expect(scratch.path(state) == gate.stateDirectory)
        try scratch.write("\(state)/lists/porn/by-hand.txt", "by-hand.example\n")
        try scratch.write("\(state)/lists/updated", "1\n")
        #expect(gate.daemon.waitFor("names=50003", timeout: 5), "\(gate.log)")
        #expect(gate.log.contains("built from other list files; rebuilding from the text lists"))
        #expect(try gate.dig("www.by-hand.example").status == "NXDOMAIN")
        gate.daemon.signal(SIGTERM)
        #expect(gate.daemon.waitForExit() == 0)
    }
}
