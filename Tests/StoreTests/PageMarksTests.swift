import TestSupport
import Testing

@testable import Store

/// Instants the parent's page keeps (migration 6): a mark only moves forward, and a
/// database of version 5 gains the table with its other rows kept.
@Suite(.blocking) struct PageMarksTests {
    @Test func aMarkOnlyMovesForwardAndSurvivesAReopen() throws {
        let fixture = try StoreFixture()
        #expect(try fixture.store.pageMark("devices_seen") == nil)
        try fixture.store.advancePageMark("devices_seen", to: testNow)
        try fixture.store.advancePageMark("devices_seen", to: testNow - 60)
        #expect(try fixture.store.pageMark("devices_seen") == testNow, "an older tab's post does not move it back")
        try fixture.store.advancePageMark("devices_seen", to: testNow + 60)
        fixture.store.close()
        #expect(try fixture.reopen().pageMark("devices_seen") == testNow + 60)
    }

    @Test func aVersion5DatabaseIsMigratedWithItsDevicesKept() throws {
        let fixture = try StoreFixture()
        try fixture.store.saveDevice(mac: "aa:bb:cc:dd:ee:01", name: "tablet", profile: "kid", now: testNow, by: "t")
        try fixture.store.enqueue([hit()], maxRows: 10)
        try fixture.store.recordHistory([hit()])
        // As a gateway of an earlier release left it.
        try fixture.store.testExecute(
            """
            DROP TRIGGER hit_history_back;
            ALTER TABLE client_sightings DROP COLUMN shared_queries; DROP TABLE shared_sightings;
            ALTER TABLE devices DROP COLUMN report_to; ALTER TABLE devices DROP COLUMN report_from;
            ALTER TABLE devices DROP COLUMN reported_profile;
            ALTER TABLE web_sessions DROP COLUMN shared; DROP TABLE web_sessions_ended;
            DROP TRIGGER hit_history_gone; DROP TABLE hit_history_gone; DROP INDEX hit_history_unshared;
            ALTER TABLE hit_history DROP COLUMN shared_count; ALTER TABLE activity_hours DROP COLUMN changes;
            ALTER TABLE activity_hours DROP COLUMN shared_changes; DROP TABLE shared_hit_history;
            DROP TABLE shared_activity;
            DROP TABLE page_marks; DROP INDEX hit_history_profile_last_seen; DROP INDEX hit_queue_open_order;
            DROP TABLE hit_bound_totals; DROP TABLE requests; DROP TABLE notices; DROP TABLE notice_totals; DROP TABLE summaries;
            DROP TABLE shared_state; DROP INDEX overrides_uid; DROP INDEX overrides_unshared;
            ALTER TABLE overrides DROP COLUMN uid; ALTER TABLE overrides DROP COLUMN shared;
            ALTER TABLE devices DROP COLUMN shared;
            ALTER TABLE hit_queue DROP COLUMN names;
            ALTER TABLE dead_letter DROP COLUMN names; ALTER TABLE hit_history DROP COLUMN names;
            PRAGMA user_version = 5;
            """)
        fixture.store.close()
        let store = try fixture.reopen()
        #expect(try store.testInteger("PRAGMA user_version") == Migrations.latest && Migrations.latest == 18)
        #expect(store.recoveryNote == nil)
        #expect(try store.devices().map(\.name) == ["tablet"])
        #expect(try store.nextBatch(profile: "alice", now: testNow)?.events == [hit()])
        #expect(try store.recentHits(since: 0).map(\.names) == [0])
        try store.advancePageMark("devices_seen", to: testNow)
        #expect(try store.pageMark("devices_seen") == testNow)
    }
}
