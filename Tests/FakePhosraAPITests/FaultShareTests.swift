import TestSupport
import Testing

/// The random share of failing device requests the soak runs against.
@Suite(.blocking) struct FaultShareTests {
    @Test func everyDeviceRequestFailsAtAShareOfOne() throws {
        let harness = try Harness()
        harness.fake.faultShare = .init(share: 1, faults: [.serverError], seed: 7)
        #expect(try harness.policy().status == 500)
        #expect(try harness.report(#"{"report_type":"blocked_attempt","payload":{}}"#).status == 500)
        #expect(try harness.ack(#"{"version":42}"#).status == 500)
        #expect(harness.fake.reports.isEmpty && harness.fake.acks.isEmpty)
        #expect(harness.fake.faultShare?.requests == 3)
        #expect(harness.fake.faultShare?.drawn == [.serverError, .serverError, .serverError])
    }

    @Test func noneFailsAtAShareOfZeroAndParentRoutesAreLeftAlone() throws {
        let harness = try Harness()
        harness.fake.faultShare = .init(share: 0, faults: [.serverError], seed: 7)
        #expect(try harness.policy().status == 200)
        #expect(try harness.ack(#"{"version":42}"#).status == 200)
        harness.fake.faultShare = .init(share: 1, faults: [.serverError], seed: 7)
        #expect(try harness.revoke(harness.deviceID).status == 204, "a parent route draws no fault")
        #expect(harness.fake.faultShare?.requests == 0)
    }

    /// A tenth, give or take what 2,000 draws allow, and replayable from the seed.
    @Test func aTenthIsDrawnFromTheSeed() {
        func draws(_ seed: UInt64) -> [FakePhosraAPI.Fault?] {
            var share = FakePhosraAPI.FaultShare(share: 0.1, faults: [.panic, .dropAfterProcessing], seed: seed)
            return (0..<2000).map { _ in share.draw(for: .report) }
        }
        let first = draws(42)
        let failed = first.compactMap { $0 }.count
        #expect((140...260).contains(failed), "\(failed) of 2000")
        #expect(Set(first.compactMap { $0 }) == [.panic, .dropAfterProcessing])
        #expect(first == draws(42))
        #expect(first != draws(43))
    }

    /// Faults injected by hand come first; the share applies only when none is waiting.
    @Test func injectedFaultsComeFirst() throws {
        let harness = try Harness()
        harness.fake.faultShare = .init(share: 1, faults: [.serverError], seed: 7)
        harness.fake.injectFault(.panic, on: .policy)
        let panicked = try harness.policy()
        #expect(panicked.status == 500 && panicked.body.isEmpty)
        #expect(harness.fake.faultShare?.requests == 0)
    }
}
