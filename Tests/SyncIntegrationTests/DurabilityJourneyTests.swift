import Foundation
import TestSupport
import Testing

extension SyncFaultSuite {
    /// Hits and policy through an API outage and a crash (docs/sync.md#polling): nothing blocked
    /// is lost, nothing is counted twice once the receiver drops duplicate `batch_id`s.
    @Suite(.serialized, .blocking) struct DurabilityJourneyTests {
        @Test func apiDownCrashRestartAndDrain() throws {
            let h = try SyncHarness()
            try h.registered()
            var expected: [String: Int] = [:]
            /// A blocked query, counted in `expected`.
            @discardableResult
            func block(
                _ gate: GateRun, _ name: String, _ type: String = "A", from client: String = "127.0.0.1"
            ) throws -> DigAnswer {
                let answer = try gate.dig(name, type, from: client)
                #expect(answer.isBlocked, "\(name) \(type) from \(client): \(answer)")
                expected["\(name) \(client)", default: 0] += 1
                return answer
            }

            // Registered, running, first policy enforced.
            let first = try h.run()
            defer { first.daemon.stop() }
            #expect(h.waitApplied(first), "\(first.log)")
            try block(first, "www.reddit.com")

            // API down: still enforcing, hits queued in the store while run is up.
            h.api.stop()
            for _ in 0..<3 { try block(first, "www.reddit.com") }
            try block(first, "www.reddit.com", "AAAA")
            try block(first, "old.reddit.com", from: "127.0.0.2")
            try block(first, "old.reddit.com", "AAAA", from: "127.0.0.2")
            #expect(h.eventually(8) { (h.profileStatus()?["hits_queued"]?.int ?? 0) > 0 }, "\(h.statusText())")
            let running = h.status()
            #expect(running?["run"]?["alive"]?.bool == true)
            #expect(running?["run"]?["pid"]?.int == Int(first.daemon.pid))

            // kill -9 once every blocked query is in the store (flushed every 5 s, queue and
            // history together): what was flushed is safe.
            var perDomain: [String: Int] = [:]
            for (key, count) in expected { perDomain[String(key.prefix { $0 != " " }), default: 0] += count }
            let flushed = try h.eventually(8) {
                let groups = try h.command(["hits", "--json"]).lines.map { try TestJSON.parse($0) }
                return perDomain.allSatisfy { domain, count in
                    groups.first { $0["domain"]?.string == domain }?["count"]?.int == count
                }
            }
            #expect(flushed, "every block in the store before the crash: \((try? h.command(["hits"]).stdout) ?? "")")
            first.killHard()
            #expect(!first.daemon.isRunning)

            // Restart with the API still down: the same policy, from the store, before any
            // network call; the queue survived.
            let second = try h.run(port: first.port)
            defer { second.daemon.stop() }
            #expect(second.log.contains("event=enforcing profile=default source=cached version=42"), "\(second.log)")
            #expect(try block(second, "www.reddit.com").extendedErrors == [SyncHarness.redditBlock])
            #expect((h.profileStatus()?["hits_queued"]?.int ?? 0) > 0, "\(h.statusText())")
            #expect(h.profileStatus()?["policy_version"]?.int == 42)

            // API back, and the first reply to a report is lost: the batch comes again
            // with the same batch_id; after de-duplication every count is exact.
            h.api.injectFault(.dropAfterProcessing, on: .report)
            try h.api.start()
            let drained = h.eventually(14) {
                h.deliveredCounts() == expected && h.profileStatus()?["hits_queued"]?.int == 0
            }
            #expect(drained, "delivered \(h.deliveredCounts()), expected \(expected); \(h.statusText())\n\(second.log)")
            #expect(!h.resentBatchIDs().isEmpty, "the batch whose reply was lost is resent with its batch_id")
            for id in h.resentBatchIDs() {
                let copies = h.blockedAttempts.filter { $0["batch_id"]?.string == id }
                #expect(
                    Set(copies.map { $0["events"]?.description ?? "" }).count == 1,
                    "a resent batch carries the same events")
            }
            #expect(h.blockedAttempts.allSatisfy { $0["policy_version"]?.int == 42 })
            #expect(try second.dig("www.reddit.com").isBlocked)
        }

        /// SIGTERM flushes the hits still in memory (docs/configuration.md): blocks a moment before the
        /// stop are in the store, and go out exactly once after the restart.
        @Test func sigtermFlushesHits() throws {
            let h = try SyncHarness()
            try h.registered()
            let gate = try h.run()
            defer { gate.daemon.stop() }
            #expect(h.waitApplied(gate), "\(gate.log)")
            h.api.stop()
            for _ in 0..<3 { #expect(try gate.dig("www.reddit.com").isBlocked) }
            gate.daemon.signal(SIGTERM)
            #expect(gate.daemon.waitForExit(timeout: 8) == 0, "\(gate.log)")

            let groups = try h.command(["hits", "--json"]).lines.compactMap { try? TestJSON.parse($0) }
            #expect(groups.first { $0["domain"]?.string == "www.reddit.com" }?["count"]?.int == 3, "\(groups)")
            #expect((h.profileStatus()?["hits_queued"]?.int ?? 0) > 0, "\(h.statusText())")

            try h.api.start()
            let again = try h.run()
            defer { again.daemon.stop() }
            #expect(
                h.eventually(10) { h.deliveredCounts() == ["www.reddit.com 127.0.0.1": 3] }, "\(h.deliveredCounts())")
        }

        /// `hit_queue_max` bounds the queue: old rows are folded (per name into a client `*`
        /// row, then per rule), the number folded goes out as `merged_events`, no count is lost.
        @Test func queueBoundMergesWithMergedEvents() throws {
            let h = try SyncHarness()
            try h.registered()
            let gate = try h.run(["--hit-queue-max": "5"])
            defer { gate.daemon.stop() }
            #expect(h.waitApplied(gate), "\(gate.log)")

            h.api.stop()
            var sent = 0
            // A first block, to see a flush happen: the rest then lands in one flush.
            #expect(try gate.dig("first.reddit.com").isBlocked)
            sent += 1
            #expect(h.eventually(8) { (h.profileStatus()?["hits_queued"]?.int ?? 0) > 0 }, "\(h.statusText())")
            for client in 2...13 {
                #expect(try gate.dig("www.reddit.com", from: "127.0.0.\(client)").isBlocked)
                sent += 1
            }
            for name in ["a.reddit.com", "b.reddit.com", "c.reddit.com"] {
                #expect(try gate.dig(name).isBlocked)
                sent += 1
            }
            #expect(
                h.eventually(8) { (h.profileStatus()?["merged_pending"]?.int ?? 0) > 0 },
                "\(h.statusText())\n\(gate.log)")
            // The line is written after the store's commit that `status` reads.
            #expect(h.eventually(8) { gate.log.contains("event=hits_merged") }, "\(gate.log)")
            let queued = h.profileStatus()?["hits_queued"]?.int ?? 0
            #expect(queued <= 6, "bounded at 5 rows (plus the frozen batch in flight): \(queued)")

            try h.api.start()
            let total = { h.deliveredCounts().values.reduce(0, +) }
            #expect(
                h.eventually(10) { total() == sent && h.profileStatus()?["hits_queued"]?.int == 0 },
                "delivered \(h.deliveredCounts()) of \(sent)")
            let batches = h.uniqueBatches()
            let merged = batches.compactMap { $0["merged_events"]?.int }.reduce(0, +)
            #expect(merged > 0, "\(batches.map(\.description))")
            let events = batches.flatMap { $0["events"]?.array ?? [] }
            // Old rows were folded per name (client `*`), then per rule (`*.reddit.com`).
            let star = events.filter { $0["client"]?.string == "*" }
            #expect(
                star.contains { ["www.reddit.com", "*.reddit.com"].contains($0["domain"]?.string ?? "") },
                "\(events)")
            // No block is lost on the way: the events' counts add up to what was sent.
            #expect(events.reduce(0) { $0 + ($1["count"]?.int ?? 0) } == sent, "\(events)")
            #expect(h.profileStatus()?["merged_pending"]?.int == 0)
        }
    }
}
