import Foundation
import TestSupport
import Testing

/// The enforcement report is judged against the lists in force, not those of the start:
/// after `blocklists update` adds a category, the next policy's report no longer says it
/// has no list, and the start's compiled file is no longer mapped by the daemon (nothing
/// of the sync keeps the old lists alive).
@Suite(.serialized, .blocking) struct ListsInForceTests {
    @Test func theNextReportNamesTheUpdatedListsAndTheOldTrieIsUnmapped() throws {
        let fixture = try SyncFixture()
        #expect(try fixture.register().status == 0)
        let server = try TestListServer()
        try fixture.scratch.write("manifest.json", server.manifest([("gambling", "Bets", "bets.txt", "domains")]))
        server.set("bets.txt", .list("bets.example\n", etag: #""b1""#))
        let gate = try fixture.run()
        defer { gate.daemon.stop() }
        #expect(fixture.eventually { gate.log.contains("event=policy_applied") }, "\(gate.log)")
        #expect(fixture.eventually { levelDetail(fixture.api, version: 42) != nil })
        #expect(levelDetail(fixture.api, version: 42)?.contains("gambling") == true, "no gambling list at the start")
        let compiled = fixture.state + "/lists/categories.trie"
        let atStart = try maps(of: gate.daemon.pid)
        #expect(atStart.contains { $0.hasSuffix(compiled) }, "the start's lists are mapped at \(compiled)")

        let update = try GateCommand.run([
            "blocklists", "update", "--manifest", fixture.scratch.path("manifest.json"), "--lists", fixture.lists,
            "--state-dir", fixture.state, "--ca-file", server.certificates.caFile,
        ])
        #expect(update.status == 0, "\(update.stderr)")
        #expect(gate.daemon.waitFor("event=lists_updated", timeout: 5), "\(gate.log)")
        #expect(try gate.dig("www.bets.example").status == "NXDOMAIN")
        // The file was replaced by a rename: the start's image shows as deleted while mapped.
        let unmapped = try fixture.eventually(5) {
            try !maps(of: gate.daemon.pid).contains { $0.hasSuffix("categories.trie (deleted)") }
        }
        let mapped = try maps(of: gate.daemon.pid).filter { $0.contains("categories.trie") }
        #expect(unmapped, "the start's lists are still mapped: \(mapped)")

        fixture.api.updatePolicy(fixture.policyID) { $0.webFilter.blockedDomains.append("newsite.example") }
        #expect(fixture.eventually { levelDetail(fixture.api, version: 43) != nil }, "\(gate.log)")
        let detail = levelDetail(fixture.api, version: 43) ?? ""
        #expect(!detail.contains("gambling"), "the report uses the updated lists: \(detail)")
        #expect(detail.contains("dating"), "the categories still without a list are still named: \(detail)")
    }

    /// The `web_filter_level` line of the enforcement report for `version`.
    private func levelDetail(_ api: FakePhosraAPI, version: Int) -> String? {
        let report = api.reports.last {
            $0.reportType == "enforcement_status" && $0.payload["policy_version"]?.int == version
        }
        let line = report?.payload["results"]?.array?.first { $0["category"]?.string == "web_filter_level" }
        return line?["detail"]?.string
    }

    /// The mappings of process `pid` that a file backs, as `/proc/PID/maps` names them.
    /// Read to its end: a procfs file has no size to go by.
    private func maps(of pid: Int32) throws -> [String] {
        guard let file = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { return [] }
        defer { try? file.close() }
        let text = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            return fields.count == 6 ? fields[5].trimmingCharacters(in: .whitespaces) : nil
        }
    }
}
