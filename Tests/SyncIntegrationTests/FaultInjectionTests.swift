import Foundation
import TestSupport
import Testing

extension SyncFaultSuite {
    /// Faults injected into the real binary's surroundings: a full state directory, a
    /// `kill -9` in the middle of a hit report and of a policy swap, an API that is slow,
    /// fails and cuts its JSON short. Each asserts that the gateway kept answering and that
    /// every blocked query reached the API exactly once (`deliveredCounts` de-duplicates
    /// resent batches by `batch_id`, as the real receiver does).
    @Suite(.serialized, .blocking) struct FaultInjectionTests {
        /// Blocked queries made, by "domain client", to compare with what the API received.
        final class Blocks {
            var expected: [String: Int] = [:]

            func block(_ gate: GateRun, _ name: String, from client: String = "127.0.0.1") throws {
                let answer = try gate.dig(name, "A", from: client)
                #expect(answer.isBlocked, "\(name) from \(client): \(answer)")
                expected["\(name) \(client)", default: 0] += 1
            }
        }

        @Test func aFullStateDirectoryKeepsAnsweringAndCountsEveryHitOnceWhenSpaceReturns() throws {
            let h = try SyncHarness()
            try FileManager.default.createDirectory(atPath: h.state, withIntermediateDirectories: true)
            let mounted = try Program.run("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", h.state])
            try #require(mounted.status == 0, "mount: \(mounted.stderr)")
            defer { _ = try? Program.run("/bin/umount", ["-l", h.state]) }
            try h.registered()
            let metricsPort = FreePort.tcpAndUDP()
            let gate = try h.run(["--metrics-listen": "127.0.0.1:\(metricsPort)"])
            defer { gate.daemon.stop() }
            /// Store writes that failed so far, as `/metrics` counts them.
            func failedWrites() -> Int? {
                MetricsScrape.value("phosra_gate_store_write_failures_total", port: metricsPort).map { Int($0) }
            }
            #expect(h.waitApplied(gate), "\(gate.log)")
            #expect(failedWrites() == 0)
            let blocks = Blocks()
            try blocks.block(gate, "www.reddit.com")
            #expect(h.eventually(10) { h.deliveredCounts() == blocks.expected }, "\(h.deliveredCounts())")

            // Fill the file system to the last byte.
            let filler = h.state + "/filler"
            #expect(FileManager.default.createFile(atPath: filler, contents: nil))
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
            let chunk = Data(count: 65_536)
            var full = false
            while !full {
                do { try handle.write(contentsOf: chunk) } catch { full = true }
            }
            for size in [4096, 512, 1] {
                while (try? handle.write(contentsOf: Data(count: size))) != nil {}
            }
            try? handle.close()

            for _ in 0..<4 { try blocks.block(gate, "www.reddit.com") }
            for _ in 0..<3 { try blocks.block(gate, "old.reddit.com", from: "127.0.0.2") }
            #expect(try gate.dig("homework.example.test").isForwarded, "allowed names still answered")
            // Writes keep failing (a flush every 5 s); the log says so once.
            #expect(gate.daemon.waitFor("event=store_failed", timeout: 8), "\(gate.log)")
            let failures = failedWrites() ?? 0
            #expect(failures >= 1)
            #expect(h.eventually(12) { (failedWrites() ?? 0) > failures }, "another write failed: \(gate.log)")
            #expect(gate.log.components(separatedBy: "event=store_failed").count - 1 == 1, "\(gate.log)")
            #expect(try gate.dig("www.reddit.com", "A", from: "127.0.0.3").isBlocked)
            blocks.expected["www.reddit.com 127.0.0.3", default: 0] += 1

            // Space returns: every block is reported, once.
            try FileManager.default.removeItem(atPath: filler)
            // The sync's backoff after the failed writes, on a machine the whole suite keeps busy.
            let drained = h.eventually(60) {
                h.deliveredCounts() == blocks.expected && h.profileStatus()?["hits_queued"]?.int == 0
            }
            #expect(drained, "delivered \(h.deliveredCounts()), expected \(blocks.expected)\n\(gate.log)")
            #expect(gate.log.contains("event=store_writable"), "\(gate.log)")
        }

        @Test func aKillDuringAHitReportLosesNothingAndCountsNothingTwice() throws {
            let h = try SyncHarness()
            try h.registered()
            let first = try h.run()
            defer { first.daemon.stop() }
            #expect(h.waitApplied(first), "\(first.log)")
            let blocks = Blocks()
            // The next report is held by the API for 4 s (it is processed all the same).
            h.api.injectFault(.slow(.seconds(4)), on: .report)
            for _ in 0..<3 { try blocks.block(first, "www.reddit.com") }
            try blocks.block(first, "old.reddit.com", from: "127.0.0.2")
            // Flushed within 5 s, then reported within 1 s: the report is in flight.
            let inFlight = h.eventually(10) { h.api.pendingFaults(on: .report).isEmpty }
            #expect(inFlight, "a report reached the slow API")
            // Killed while the API holds the report (4 s): its reply never comes back.
            first.killHard()
            #expect(!first.daemon.isRunning)

            // The API processed the report after its client died; the restarted gateway
            // never saw the reply and sends the batch again, with the same batch_id.
            let second = try h.run(port: first.port)
            defer { second.daemon.stop() }
            // The sync's backoff after the failed writes, on a machine the whole suite keeps busy.
            let drained = h.eventually(60) {
                h.deliveredCounts() == blocks.expected && h.profileStatus()?["hits_queued"]?.int == 0
            }
            #expect(drained, "delivered \(h.deliveredCounts()), expected \(blocks.expected)\n\(second.log)")
            // The copy the slow API was still holding lands too; counts stay exact.
            #expect(h.eventually(8) { !h.resentBatchIDs().isEmpty }, "the batch in flight at the kill arrived twice")
            #expect(h.deliveredCounts() == blocks.expected, "\(h.deliveredCounts())")
            #expect(try second.dig("www.reddit.com").isBlocked)
        }

        @Test func aKillDuringAPolicySwapEnforcesTheLastGoodPolicyAfterRestart() throws {
            let h = try SyncHarness()
            try h.registered()
            var gate = try h.run()
            #expect(h.waitApplied(gate), "\(gate.log)")
            // Each round the parent publishes a version that also blocks a name of its own,
            // and the gateway is killed at a later moment of its fetch, store, apply,
            // acknowledge and report of it; restarted with the API down, only the store
            // speaks, and it must hold the new version or the last one it held, whole.
            typealias Moment = (name: String, reached: (_ version: Int, _ asked: Int) -> Bool)
            let moments: [Moment] = [
                ("at once", { _, _ in true }),
                ("once the API was asked for the policy", { _, asked in h.policyRequests.count > asked }),
                (
                    "once the policy was applied",
                    { version, _ in gate.log.contains("event=policy_applied profile=default version=\(version) ") }
                ),
                (
                    "once the API had the acknowledgement",
                    { version, _ in h.api.acks.contains { $0.version == version } }
                ),
                (
                    "once the API had the enforcement report",
                    { version, _ in h.enforcementReports.contains { $0["policy_version"]?.int == version } }
                ),
            ]
            var blocked = ["reddit.com"]
            // The version the store is known to hold: a round killed before it stored its
            // version leaves the one before, so the next round may still find that.
            var stored = 42
            for (round, moment) in moments.enumerated() {
                let version = 43 + round
                let name = "v\(version).example.test"
                let asked = h.policyRequests.count
                blocked.append(name)
                h.api.updatePolicy(h.policyID) { [blocked] in $0.webFilter.blockedDomains = blocked }
                #expect(h.eventually(10) { moment.reached(version, asked) }, "\(moment.name): \(gate.log)")
                gate.killHard()
                h.api.stop()
                gate = try h.run(port: gate.port)
                let enforced = gate.log.components(
                    separatedBy: "event=enforcing profile=default source=cached version="
                )
                .dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) }
                #expect(enforced == stored || enforced == version, "killed \(moment.name): \(gate.log)")
                let answer = try gate.dig(name)
                #expect(
                    enforced == version ? answer.isBlocked : answer.isForwarded,
                    "killed \(moment.name), enforcing \(enforced.map(String.init) ?? "nothing"): \(answer)")
                if let enforced { stored = enforced }
                #expect(try gate.dig("www.reddit.com").isBlocked, "killed \(moment.name)")
                try h.api.start()
            }
            // With the API back, the last version is enforced and acknowledged in the end.
            let last = 43 + moments.count - 1
            let settled = h.eventually(30) {
                h.api.acks.contains { $0.version == last }
                    && ((try? gate.dig("v\(last).example.test").isBlocked) ?? false)
            }
            #expect(settled, "\(gate.log)")
            gate.daemon.stop()
        }

        @Test func aSlowFailingTruncatingAPILosesNoHitAndKeepsTheLastGoodPolicy() throws {
            let h = try SyncHarness()
            try h.registered()
            let gate = try h.run()
            defer { gate.daemon.stop() }
            #expect(h.waitApplied(gate), "\(gate.log)")
            let blocks = Blocks()
            // Reports: two 500s, a dropped connection, a slow reply; then normal service.
            h.api.injectFault(.serverError, on: .report, times: 2)
            h.api.injectFault(.dropBeforeProcessing, on: .report)
            h.api.injectFault(.slow(.seconds(3)), on: .report)
            // The next policy arrives cut in half once, with a 500 before it.
            h.api.injectFault(.serverError, on: .policy)
            h.api.injectFault(.truncatedBody, on: .policy)
            h.api.updatePolicy(h.policyID) { $0.webFilter.blockedDomains = ["reddit.com", "games.example.test"] }
            // A block and an allowed name per request the API sees, until every fault has
            // been met (bounded in time all the same).
            let clock = ContinuousClock()
            let end = clock.now + .seconds(20)
            var round = 0
            while clock.now < end,
                !(h.api.pendingFaults(on: .report).isEmpty && h.api.pendingFaults(on: .policy).isEmpty)
            {
                try blocks.block(gate, "www.reddit.com", from: "127.0.0.\(1 + round % 3)")
                #expect(try gate.dig("homework.example.test").isForwarded || round > 0, "answering")
                round += 1
                let seen = h.api.requests.count
                h.eventually(1) { h.api.requests.count > seen }
            }
            #expect(h.api.pendingFaults(on: .report).isEmpty && h.api.pendingFaults(on: .policy).isEmpty)
            #expect(h.waitApplied(gate, version: 43, timeout: 15), "\(gate.log)")
            #expect(h.policyRequests.count >= 3, "a 500, the cut JSON, then the whole policy")
            // The sync's backoff after the failed writes, on a machine the whole suite keeps busy.
            let drained = h.eventually(60) {
                h.deliveredCounts() == blocks.expected && h.profileStatus()?["hits_queued"]?.int == 0
            }
            #expect(drained, "delivered \(h.deliveredCounts()), expected \(blocks.expected)\n\(gate.log)")
            #expect(try gate.dig("games.example.test").isBlocked)
        }
    }
}
