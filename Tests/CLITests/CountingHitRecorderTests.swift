import DomainMatch
import Policy
import TestSupport
import Testing

@testable import Commands
@testable import Gateway

/// `/metrics`' block counter on a loop thread: counted, not timed.
@Suite(.blocking) struct CountingHitRecorderTests {
    @Test(.countsAllocationsAsShipped)
    func aBlockWhoseLabelsWereSeenAllocatesNothing() throws {
        let recorder = CountingHitRecorder(next: DiscardingHitRecorder())
        let hit = Hit(
            profile: "kid", name: try QueryName.parse("www.adult.example"),
            decision: Decision(.block, .category, rule: "adult.example", category: .adult),
            client: IPAddress("192.168.1.20"), source: .dns, time: 100)
        recorder.record(hit)
        recorder.record(hit)
        #expect(Allocations.count { recorder.record(hit) } == 0)
        #expect(recorder.blocks.values.map(\.labels) == [["category", "adult", "kid", "dns"]])
        #expect(recorder.blocks.values.map(\.value) == [3])
    }
}
