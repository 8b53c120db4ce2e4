import SystemIO
import TestSupport
import Testing

@testable import Store

/// Every statement on a connection goes through its `Pacer` (SQLite's progress handler),
/// so a long flush on the idle-class sync thread rests between slices
/// (docs/performance.md#background-threads). Counted, not timed.
@Suite(.blocking) struct PacingTests {
    @Test func sqliteCallsThePacerWhileAStatementRuns() throws {
        let scratch = try ScratchDirectory("phosra-gate-pacing")
        // Each clock read is 20 µs later: a 200 µs slice ends every few handler calls.
        var now: Int64 = 0
        var rests = 0
        let pacer = Pacer(
            slice: 200_000,
            clock: {
                now += 20_000
                return now
            }, rest: { rests += 1 })
        let database = try Database(path: scratch.path + "/paced.db", mode: .readWrite, pacer: pacer)
        try database.execute("CREATE TABLE numbers (n INTEGER PRIMARY KEY, square INTEGER)")
        #expect(database.pacer.rests == 0)
        // One statement doing a lot of work: a recursive CTE of 5,000 rows.
        try database.run(
            """
            INSERT INTO numbers (n, square)
            WITH RECURSIVE counting(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM counting WHERE n < 5000)
            SELECT n, n * n FROM counting
            """)
        #expect(try database.integer("SELECT count(*) FROM numbers") == 5000)
        #expect(database.pacer.rests > 0)
        #expect(database.pacer.rests == rests)
    }

    @Test func aFlushOfHitsIntoTheStoreIsPaced() throws {
        let fixture = try StoreFixture()
        let before = try fixture.store.withDatabase { $0.pacer.rests }
        // Five thousand upserts are milliseconds of SQLite's CPU on any machine: many slices
        // of 200 µs, each ended by a rest (a no-op on this ordinary test thread).
        try fixture.store.recordHistory((0..<5_000).map { hit("site\($0).example") })
        let after = try fixture.store.withDatabase { $0.pacer.rests }
        #expect(after > before)
    }
}
