import DomainMatch
import Testing

@testable import Policy
@testable import Sync

@Suite struct HitAggregatorTests {
    @Test func aPageLoadIsOneEventCountingItsQueries() {
        let aggregator = HitAggregator()
        let decision = Decision(.block, .category, rule: "adult.example", category: .adult)
        let client = IPAddress("192.168.1.20")
        for (offset, _) in ["A", "AAAA", "HTTPS"].enumerated() {
            aggregator.record(
                Hit(
                    profile: "kid", name: "www.adult.example", decision: decision, client: client, source: .dns,
                    time: 100 + Int64(offset)))
        }
        aggregator.record(
            Hit(
                profile: "kid", name: "www.adult.example", decision: decision, client: IPAddress("192.168.1.21"),
                source: .dns, time: 105))
        let events = aggregator.drain().sorted { $0.key.client < $1.key.client }
        #expect(events.map(\.count) == [3, 1])
        #expect(events[0].firstSeen == 100 && events[0].lastSeen == 102)
        #expect(
            events[0].key.reasonText == "category:adult" && events[0].category == .adult
                && events[0].rule == "adult.example")
        #expect(aggregator.drain().isEmpty)
    }

    @Test func concurrentRecordingLosesNothing() async {
        let aggregator = HitAggregator()
        let decision = Decision(.block, .blockedDomain, rule: "x.example")
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<5000 {
                        aggregator.record(
                            Hit(
                                profile: "p", name: "n\(index % 50).x.example", decision: decision,
                                client: IPAddress("10.0.0.\(worker)"), source: .dns, time: Int64(index)))
                    }
                }
            }
        }
        #expect(aggregator.drain().reduce(0) { $0 + $1.count } == 20_000)
    }
}
