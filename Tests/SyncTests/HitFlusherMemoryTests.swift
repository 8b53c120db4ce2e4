import DomainMatch
import Policy
import Store
import TestSupport
import Testing

@testable import Sync

/// What a flush after a burst holds at once, counted by the test executable's malloc: each
/// event becomes its row only as the store reaches it, so no allocation is as big as the
/// rows of the whole burst (docs/performance.md#the-heap-by-owner).
@Suite(.blocking) struct HitFlusherMemoryTests {
    @Test(.enabled(if: Allocations.counted, "a sanitizer's runtime owns malloc"))
    func aBurstsRowsAreNeverAllInMemoryAtOnce() throws {
        let scratch = try ScratchDirectory("pg-flush-memory")
        let store = try Store.open(directory: scratch.path, now: 1000)
        // Bounds past the burst: this measures the flush, not the folding.
        let aggregator = HitAggregator(eventsPerShard: 8192)
        let flusher = HitFlusher(aggregator: aggregator, store: store, queueMax: 100_000, namesPerMinute: 100_000)
        let decision = Decision(.block, .category, rule: "adult.example", category: .adult)
        let client = IPAddress("192.168.1.20")
        func burst(_ round: Int) {
            for index in 0..<5_000 {
                aggregator.record(
                    Hit(
                        profile: "kid", name: "www.n\(index)-\(round).adult.example", decision: decision,
                        client: client, source: .dns, time: 2000 + Int64(index % 5)))
            }
        }
        // The first flush prepares the statements and grows the tables; the second is counted.
        burst(1)
        try flusher.flush(activity: [:], versions: ["kid": 3], now: 2005)
        burst(2)
        let largest = try Allocations.largest {
            try flusher.flush(activity: [:], versions: ["kid": 3], now: 2010)
        }
        // An array of the burst's rows would be one allocation of at least this size.
        let allRows = 5_000 * MemoryLayout<HitRow>.stride
        #expect(largest < allRows / 4, "largest allocation \(largest) bytes; all rows \(allRows)")
        // And everything was stored, in the queue and the history.
        #expect(try store.queueCounts(profile: "kid").queued == 10_000)
        let history = try store.recentHits(since: 0, profile: "kid")
        #expect(history.count == 10_000)
        #expect(history.allSatisfy { $0.count == 1 && $0.categories == ["adult"] && $0.clients == ["192.168.1.20"] })
    }
}
