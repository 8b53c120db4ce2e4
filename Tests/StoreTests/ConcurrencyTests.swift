import Dispatch
import Locks
import TestSupport
import Testing

@testable import Store

/// One store shared by the DNS threads (hits), the sync loop (batches) and `status`.
@Suite(.blocking) struct ConcurrencyTests {
    @Test func manyThreadsShareOneStore() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let failures = Lock<[String]>([])
        let delivered = Lock(0)
        let writers = 6
        let rounds = 40
        DispatchQueue.concurrentPerform(iterations: writers + 2) { worker in
            do {
                for round in 0..<rounds {
                    switch worker {
                    case ..<writers:
                        try store.enqueue(
                            [
                                hit("w\(worker).example", client: "10.0.0.\(round % 3)"),
                                hit("r\(round).example", count: 2),
                            ], maxRows: 50)
                        try store.recordHistory([hit("w\(worker).example")])
                    case writers:
                        if let batch = try store.nextBatch(profile: "alice", maxEvents: 7, now: testNow) {
                            try store.completeBatch(id: batch.id)
                            delivered.withLock { $0 += batch.events.reduce(0) { $0 + $1.count } }
                        }
                    default:
                        _ = try store.queueCounts(profile: "alice")
                        _ = try store.recentHits(since: 0)
                        try store.writeHeartbeat(
                            Heartbeat(pid: 1, startedAt: 0, updatedAt: Int64(round), version: "t", listeners: []))
                    }
                }
            } catch {
                failures.withLock { $0.append("worker \(worker): \(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let queued = try store.testInteger("SELECT coalesce(sum(count), 0) FROM hit_queue")
        #expect(queued + delivered.withLock { $0 } == writers * rounds * 3)
        #expect(try store.recentHits(since: 0).reduce(0) { $0 + $1.count } == writers * rounds)
    }
}
