import TestSupport
import Testing

@testable import Store

@Suite(.blocking) struct HeartbeatTests {
    @Test func heartbeatIsOneRowReplacedAndCleared() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        #expect(try store.heartbeat() == nil)
        let first = Heartbeat(
            pid: 4242, startedAt: testNow, updatedAt: testNow, version: "0.3.0",
            listeners: ["dns udp 127.0.0.1:5300", "dns tcp 127.0.0.1:5300", "proxy 127.0.0.1:3128"])
        try store.writeHeartbeat(first)
        #expect(try store.heartbeat() == first)
        var later = first
        later.updatedAt += 10
        later.listeners = []
        try store.writeHeartbeat(later)
        #expect(try store.heartbeat() == later)
        #expect(try store.testInteger("SELECT count(*) FROM heartbeat") == 1)
        try store.clearHeartbeat()
        #expect(try store.heartbeat() == nil)
    }
}
