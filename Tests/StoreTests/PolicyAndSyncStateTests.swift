import TestSupport
import Testing

@testable import Store

@Suite(.blocking) struct PolicyAndSyncStateTests {
    @Test func cachedPolicyRoundTripsAndIsReplaced() throws {
        let fixture = try StoreFixture()
        #expect(try fixture.store.policy(profile: "alice") == nil)
        let first = CachedPolicy(
            profile: "alice", json: Array(#"{"version":1,"name":"Ünïcode \u{0}"}"#.utf8),
            version: 1, policyID: "pol-1", fetchedAt: testNow)
        try fixture.store.savePolicy(first)
        #expect(try fixture.store.policy(profile: "alice") == first)
        let second = CachedPolicy(profile: "alice", json: [], version: 2, policyID: "pol-2", fetchedAt: testNow + 9)
        try fixture.store.savePolicy(second)
        try fixture.store.savePolicy(
            CachedPolicy(profile: "bob", json: [1, 2], version: 7, policyID: "", fetchedAt: 0))
        fixture.store.close()
        let again = try fixture.reopen()
        #expect(try again.policy(profile: "alice") == second)
        #expect(try again.policy(profile: "bob")?.json == [1, 2])
        try again.removePolicy(profile: "bob")
        #expect(try again.policy(profile: "bob") == nil)
    }

    @Test func syncStateRoundTripsEveryField() throws {
        let fixture = try StoreFixture()
        #expect(try fixture.store.syncState(profile: "alice") == nil)
        let full = SyncState(
            profile: "alice", appliedVersion: 12, policyID: "pol", lastSyncAt: 100, lastSuccessAt: 90,
            lastError: "HTTP 503 from https://api.example/device/policy", lastErrorAt: 100,
            unauthorizedSince: 50, revoked: true, noActivePolicy: true, ackedVersion: 11,
            reportedVersion: 10, nextFullSyncAt: 21_700)
        let empty = SyncState(profile: "bob")
        try fixture.store.saveSyncState(full)
        try fixture.store.saveSyncState(empty)
        #expect(try fixture.store.syncState(profile: "alice") == full)
        #expect(try fixture.store.syncState(profile: "bob") == empty)
        var cleared = full
        cleared.lastError = nil
        cleared.lastErrorAt = nil
        cleared.unauthorizedSince = nil
        cleared.revoked = false
        try fixture.store.saveSyncState(cleared)
        #expect(try fixture.store.allSyncStates() == [cleared, empty])
    }

    @Test func valuesAreBoundNeverSpliced() throws {
        let fixture = try StoreFixture()
        let hostile = "alice'); DROP TABLE policies; --"
        try fixture.store.savePolicy(CachedPolicy(profile: hostile, json: [0], version: 1, policyID: "'", fetchedAt: 0))
        #expect(try fixture.store.policy(profile: hostile)?.policyID == "'")
        #expect(try fixture.store.policy(profile: "") == nil)
        try fixture.store.saveSyncState(SyncState(profile: "", policyID: ""))
        #expect(try fixture.store.syncState(profile: "")?.policyID == "")
    }
}
