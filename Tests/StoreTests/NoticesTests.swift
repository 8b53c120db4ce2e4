import Testing

@testable import Store

/// The notification queue: each event once by its key, oldest first, bounded by dropping
/// the oldest waiting (counted), and kept across a restart.
@Suite struct NoticesTests {
    func notice(_ key: String, at time: Int64 = testNow, kind: String = "ask") -> NoticeRow {
        NoticeRow(key: key, kind: kind, createdAt: time, body: "{\"id\":\"\(key)\"}")
    }

    @Test func anEventIsQueuedOnceByItsKeyEvenAfterItWasSent() throws {
        let fixture = try StoreFixture()
        #expect(try fixture.store.enqueueNotice(notice("ask:1"), bound: 10))
        #expect(try !fixture.store.enqueueNotice(notice("ask:1", at: testNow + 5), bound: 10))
        let due = try fixture.store.dueNotices(now: testNow)
        #expect(due.map(\.key) == ["ask:1"])
        try fixture.store.markNoticeSent(id: due[0].id, now: testNow + 1)
        #expect(try !fixture.store.enqueueNotice(notice("ask:1", at: testNow + 10), bound: 10))
        #expect(try fixture.store.dueNotices(now: testNow + 100).isEmpty)
        let state = try fixture.store.noticeQueueState()
        #expect(state.sent == 1 && state.lastSent == testNow + 1 && state.waiting == 0)
    }

    @Test func aFailureWaitsUntilItsRetryTimeAndIsShownInTheState() throws {
        let fixture = try StoreFixture()
        try fixture.store.enqueueNotice(notice("a", at: testNow), bound: 10)
        try fixture.store.enqueueNotice(notice("b", at: testNow + 1), bound: 10)
        let first = try fixture.store.dueNotices(now: testNow + 1)
        #expect(first.map(\.key) == ["a", "b"])
        try fixture.store.noticeFailed(id: first[0].id, error: "connection refused", retryAt: testNow + 30)
        #expect(try fixture.store.dueNotices(now: testNow + 29).map(\.key) == ["b"])
        #expect(try fixture.store.dueNotices(now: testNow + 30).map(\.key) == ["a", "b"])
        #expect(try fixture.store.dueNotices(now: testNow + 30)[0].attempts == 1)
        #expect(try fixture.store.nextNoticeDue() == testNow + 1)
        let state = try fixture.store.noticeQueueState()
        #expect(state.waiting == 2 && state.oldestWaiting == testNow && state.lastError == "connection refused")
    }

    @Test func pastTheBoundTheOldestWaitingAreDroppedAndCounted() throws {
        let fixture = try StoreFixture()
        for index in 0..<5 {
            try fixture.store.enqueueNotice(notice("e\(index)", at: testNow + Int64(index)), bound: 3)
        }
        #expect(try fixture.store.dueNotices(now: testNow + 10).map(\.key) == ["e2", "e3", "e4"])
        let state = try fixture.store.noticeQueueState()
        #expect(state.waiting == 3 && state.dropped == 2 && state.lastDropped == testNow + 4 && state.sent == 0)
        // A dropped event's key is still known: the same event is not made again.
        #expect(try !fixture.store.enqueueNotice(notice("e0", at: testNow + 20), bound: 3))
    }

    @Test func waitingEventsSurviveARestartAndOldSentOnesArePruned() throws {
        let fixture = try StoreFixture()
        try fixture.store.enqueueNotice(notice("old", at: testNow - 40 * 86_400), bound: 10)
        try fixture.store.markNoticeSent(id: try fixture.store.dueNotices(now: testNow)[0].id, now: testNow)
        try fixture.store.enqueueNotice(notice("waiting", at: testNow - 40 * 86_400), bound: 10)
        fixture.store.close()
        let reopened = try fixture.reopen()
        try reopened.pruneNotices(before: testNow - 30 * 86_400)
        #expect(try reopened.notices(since: 0).map(\.key) == ["waiting"])
        #expect(try reopened.dueNotices(now: testNow).map(\.key) == ["waiting"])
    }

    @Test func newDevicesAreThoseNoProfileSawBefore() throws {
        let fixture = try StoreFixture()
        func seen(_ client: String, profile: String) -> ClientSighting {
            ClientSighting(
                profile: profile, client: client, address: "192.168.1.9", mac: client, firstSeen: testNow,
                lastSeen: testNow, queries: 1)
        }
        let first = try fixture.store.recordSightings([seen("aa:bb:cc:00:00:01", profile: "alice")])
        #expect(first.map(\.client) == ["aa:bb:cc:00:00:01"])
        // Seen again, or moved to another profile: not new.
        #expect(try fixture.store.recordSightings([seen("aa:bb:cc:00:00:01", profile: "alice")]).isEmpty)
        #expect(try fixture.store.recordSightings([seen("aa:bb:cc:00:00:01", profile: "bob")]).isEmpty)
        #expect(try fixture.store.recordSightings([seen("aa:bb:cc:00:00:02", profile: "bob")]).count == 1)
    }
}
