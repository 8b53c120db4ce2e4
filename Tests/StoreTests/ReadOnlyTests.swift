import Dispatch
import Locks
import TestSupport
import Testing

@testable import Store

/// `status` and `hits` read beside a running `run` (WAL readers).
@Suite(.blocking) struct ReadOnlyTests {
    @Test func noDatabaseYetIsMissing() throws {
        let scratch = try ScratchDirectory("phosra-gate-store")
        let path = scratch.path + "/" + Store.fileName
        #expect(throws: StoreError.missing(path: path)) { try Store.openReadOnly(directory: scratch.path) }
        #expect(!RawFile.exists(path))
    }

    @Test func readsWhatTheWriterCommitsWhileItHoldsTheDatabase() throws {
        let fixture = try StoreFixture()
        let writer = fixture.store
        try writer.writeHeartbeat(
            Heartbeat(pid: 42, startedAt: 1, updatedAt: 2, version: "0.1", listeners: ["dns udp 127.0.0.1:5300"]))
        try writer.enqueue([hit()], maxRows: 100)
        let reader = try Store.openReadOnly(directory: fixture.directory)
        #expect(reader.isReadOnly)
        #expect(try reader.heartbeat()?.pid == 42)
        #expect(try reader.queueCounts(profile: "alice").queued == 1)
        // The writer carries on; the reader's next call sees the new commit.
        try writer.enqueue([hit("x.example")], maxRows: 100)
        #expect(try reader.queueCounts(profile: "alice").queued == 2)
        #expect(try writer.journalMode() == "wal")
    }

    @Test func writesThroughAReadOnlyStoreFail() throws {
        let fixture = try StoreFixture()
        let reader = try Store.openReadOnly(directory: fixture.directory)
        do {
            try reader.addNote("no", now: testNow)
            Issue.record("a write through a read-only store succeeded")
        } catch {
            guard case .sqlite(_, let code, _, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(code & 0xFF == 8)  // SQLITE_READONLY
        }
        #expect(try fixture.store.notes().isEmpty)
    }

    @Test func readerAndWriterRunConcurrentlyWithoutBusyErrors() throws {
        let fixture = try StoreFixture()
        let reader = try Store.openReadOnly(directory: fixture.directory)
        let failures = Lock<[String]>([])
        let writer = fixture.store
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            for round in 0..<100 {
                do {
                    if worker == 0 {
                        try writer.enqueue([hit("site\(round).example")], maxRows: 1000)
                    } else {
                        let seen = try reader.queueCounts(profile: "alice").queued
                        if seen > 100 { failures.withLock { $0.append("saw \(seen) rows") } }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(try reader.queueCounts(profile: "alice").queued == 100)
    }

    @Test func anOlderSchemaIsReportedNotMigrated() throws {
        let fixture = try StoreFixture()
        try fixture.store.testExecute("PRAGMA user_version = 0")
        #expect(
            throws: StoreError.olderSchema(path: fixture.databasePath, found: 0, expected: Store.supportedSchemaVersion)
        ) {
            try Store.openReadOnly(directory: fixture.directory)
        }
    }
}
