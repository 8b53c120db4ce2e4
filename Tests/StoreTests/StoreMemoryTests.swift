import SystemIO
import TestSupport
import Testing

@testable import Store

/// The heap the writing store keeps, counted by the test executable's malloc
/// (docs/performance.md#the-heap-by-owner): SQLite's page cache is held to
/// `Store.pageCacheKiB` however big the file is, though the integrity check at open reads
/// every page of it.
@Suite(.blocking) struct StoreMemoryTests {
    @Test(.enabled(if: Allocations.counted, "a sanitizer's runtime owns malloc"))
    func openingABigDatabaseKeepsASmallPageCache() throws {
        let fixture = try StoreFixture()
        let rows = (0..<30_000).map { index in
            hit("host-\(index).tracker-\(index % 97).example", matched: "tracker-\(index % 97).example")
        }
        _ = try fixture.store.enqueue(rows, maxRows: 100_000)
        try fixture.store.recordHistory(rows)
        fixture.store.close()
        let fileBytes = try Files.status(fixture.databasePath).size
        // Bigger than SQLite's default cache, so that a default cache would fill.
        #expect(fileBytes > 4 << 20, "database of \(fileBytes) bytes")

        var reopened: Store?
        let kept = try Allocations.retainedBytes { reopened = try fixture.reopen() }
        #expect(try reopened?.queueCounts(profile: "alice").queued == 30_000)
        // The cache's pages and SQLite's own structures; 2 MB and more with the default.
        #expect(kept < Store.pageCacheKiB * 1024 + 400_000, "the open store keeps \(kept) bytes")
        reopened?.close()
    }
}
