import Foundation
import TestSupport
import Testing

extension SyncFaultSuite {
    /// Faults injected into the real binary's surroundings: a full state directory, a
    /// `kill -9` in the middle of a hit report and of a policy swap, an API that is slow,
    /// fails and cuts its JSON short. Each asserts that the gateway kept answering and that
    /// every blocked query reached the API exactly once (`deliveredCounts` de-duplicates
    /// resent batches by `batch_id`, as the real receiver does).
    @Suite struct FaultInjectionTests {
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
            let gate = try h.run()
            defer { gate.daemon.stop() }
            #expect(h.waitApplied(gate), "\(gate.log)")
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
            // Two flushes fail (every 5 s); the log says so once.
            #expect(gate.daemon.waitFor("event=store_failed", timeout: 8), "\(gate.log)")
            Thread.sleep(forTimeInterval: 6)
            #expect(gate.log.components(separatedBy: "event=store_failed").count - 1 == 1, "\(gate.log)")
            #expect(try gate.dig("www.reddit.com", "A", from: "127.0.0.3").isBlocked)
            blocks.expected["www.reddit.com 127.0.0.3", default: 0] += 1

            // Space returns: every block is reported, once.
            try FileManager.default.removeItem(atPath: filler)
            let drained = h.eventually(15) {
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
            Thread.sleep(forTimeInterval: 1)
            first.killHard()
            #expect(!first.daemon.isRunning)

            // The API processed the report after its client died; the restarted gateway
            // never saw the reply and sends the batch again, with the same batch_id.
            let second = try h.run(port: first.port)
            defer { second.daemon.stop() }
            let drained = h.eventually(15) {
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
            // Version 43 also blocks games.example.test. The gateway is killed at a
            // different moment of its fetch-store-apply-acknowledge each round.
            h.api.updatePolicy(h.policyID) { $0.webFilter.blockedDomains = ["reddit.com", "games.example.test"] }
            for delay in [0, 40, 80, 120, 200, 300, 500, 800, 1200, 2000] {
                Thread.sleep(forTimeInterval: Double(delay) / 1000)
                gate.killHard()
                // Restarted with the API down: only the store speaks.
                h.api.stop()
                gate = try h.run(port: gate.port)
                let enforced = gate.log.components(
                    separatedBy: "event=enforcing profile=default source=cached version="
                )
                .dropFirst().first.map { String($0.prefix { $0.isNumber }) }
                #expect(enforced == "42" || enforced == "43", "killed after \(delay) ms: \(gate.log)")
                let games = try gate.dig("games.example.test")
                #expect(
                    enforced == "43" ? games.isBlocked : games.isForwarded,
                    "killed after \(delay) ms, enforcing \(enforced ?? "nothing"): \(games)")
                #expect(try gate.dig("www.reddit.com").isBlocked, "killed after \(delay) ms")
                try h.api.start()
            }
            // With the API back, version 43 is enforced and acknowledged in the end.
            let settled = h.eventually(15) {
                h.api.acks.contains { $0.version == 43 } && ((try? gate.dig("games.example.test").isBlocked) ?? false)
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
            let clock = ContinuousClock()
            let end = clock.now + .seconds(6)
            var round = 0
            while clock.now < end {
                try blocks.block(gate, "www.reddit.com", from: "127.0.0.\(1 + round % 3)")
                #expect(try gate.dig("homework.example.test").isForwarded || round > 0, "answering")
                round += 1
                Thread.sleep(forTimeInterval: 0.2)
            }
            #expect(h.waitApplied(gate, version: 43, timeout: 15), "\(gate.log)")
            #expect(h.policyRequests.count >= 3, "a 500, the cut JSON, then the whole policy")
            let drained = h.eventually(20) {
                h.deliveredCounts() == blocks.expected && h.profileStatus()?["hits_queued"]?.int == 0
            }
            #expect(drained, "delivered \(h.deliveredCounts()), expected \(blocks.expected)\n\(gate.log)")
            #expect(try gate.dig("games.example.test").isBlocked)
        }
    }
}
