import TestSupport
import Testing

@testable import Store

/// A damaged database is moved aside and replaced, with a note — never a crash loop.
@Suite(.blocking) struct RecoveryTests {
    /// A state directory holding `bytes` as the database file.
    private func directory(holding bytes: [UInt8]) throws -> ScratchDirectory {
        let scratch = try ScratchDirectory("phosra-gate-store")
        try RawFile.write(scratch.path + "/" + Store.fileName, bytes)
        return scratch
    }

    private func expectRecovered(
        _ scratch: ScratchDirectory, reason: String, original: [UInt8],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let path = scratch.path + "/" + Store.fileName
        let aside = "\(path).corrupt-\(testNow)"
        let store = try Store.open(directory: scratch.path, now: testNow)
        let note = "\(path) was corrupt (\(reason)); moved aside to \(aside)"
        #expect(store.recoveryNote == note, sourceLocation: sourceLocation)
        #expect(try store.notes() == [note], sourceLocation: sourceLocation)
        #expect(try RawFile.read(aside) == original, sourceLocation: sourceLocation)
        #expect(try store.schemaVersion() == Store.supportedSchemaVersion, sourceLocation: sourceLocation)
        try store.enqueue([hit()], maxRows: 10)
        store.close()
        // The note outlives the process that wrote it; the next open is clean.
        let again = try Store.open(directory: scratch.path, now: testNow + 60)
        #expect(again.recoveryNote == nil, sourceLocation: sourceLocation)
        #expect(try again.notes() == [note], sourceLocation: sourceLocation)
        #expect(try again.queueCounts(profile: "alice").queued == 1, sourceLocation: sourceLocation)
        try again.clearNotes()
        #expect(try again.notes().isEmpty, sourceLocation: sourceLocation)
    }

    @Test func garbageBytesAreMovedAside() throws {
        var generator = SeededGenerator(seed: 7)
        let garbage = (0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let scratch = try directory(holding: garbage)
        let path = scratch.path + "/" + Store.fileName
        #expect(throws: StoreError.damaged(path: path, reason: "file is not a database")) {
            try Store.openReadOnly(directory: scratch.path)
        }
        try expectRecovered(scratch, reason: "file is not a database", original: garbage)
    }

    @Test func textFileIsMovedAside() throws {
        let text = Array(String(repeating: "phosra-gate state\n", count: 300).utf8)
        try expectRecovered(try directory(holding: text), reason: "file is not a database", original: text)
    }

    @Test func zeroLengthFileIsMovedAside() throws {
        try expectRecovered(try directory(holding: []), reason: "file is empty, 0 bytes", original: [])
    }

    @Test func truncatedDatabaseIsMovedAside() throws {
        let fixture = try StoreFixture()
        // Enough rows for a file of many pages, checkpointed into the main file on close.
        let rows = (0..<3000).map { hit("site\($0).example", client: "10.0.0.\($0 % 250)") }
        try fixture.store.enqueue(rows, maxRows: 100_000)
        try fixture.store.recordHistory(rows)
        fixture.store.close()
        #expect(!RawFile.exists(fixture.databasePath + "-wal"))
        let size = Int(RawFile.size(fixture.databasePath) ?? 0)
        #expect(size > 100_000)
        RawFile.truncate(fixture.databasePath, to: size / 2)
        let original = try RawFile.read(fixture.databasePath)
        let store = try fixture.reopen(now: testNow + 1)
        let aside = "\(fixture.databasePath).corrupt-\(testNow + 1)"
        let note = try #require(store.recoveryNote)
        #expect(note.hasPrefix("\(fixture.databasePath) was corrupt ("))
        #expect(note.hasSuffix("); moved aside to \(aside)"))
        #expect(try RawFile.read(aside) == original)
        #expect(try store.queueCounts(profile: "alice").queued == 0)
        #expect(try store.notes() == [note])
    }

    @Test func aForeignDatabaseFailingMigrationIsMovedAside() throws {
        // A real SQLite file at version 0 whose `policies` table is not ours.
        let fixture = try StoreFixture()
        try fixture.store.testExecute("DROP TABLE policies; CREATE TABLE policies (x); PRAGMA user_version = 0;")
        fixture.store.close()
        let store = try fixture.reopen(now: testNow + 5)
        let note = try #require(store.recoveryNote)
        #expect(note.contains("was corrupt (migration 1 failed: table policies already exists)"))
        #expect(RawFile.exists("\(fixture.databasePath).corrupt-\(testNow + 5)"))
        #expect(try store.schemaVersion() == Store.supportedSchemaVersion)
    }

    @Test func walAndShmMoveWithTheDatabase() throws {
        let scratch = try directory(holding: Array(repeating: 0x41, count: 4096))
        let path = scratch.path + "/" + Store.fileName
        try RawFile.write(path + "-wal", Array(repeating: 0x42, count: 100))
        try RawFile.write(path + "-shm", Array(repeating: 0x43, count: 100))
        let store = try Store.open(directory: scratch.path, now: testNow)
        #expect(store.recoveryNote != nil)
        #expect(try RawFile.read("\(path).corrupt-\(testNow)-wal") == Array(repeating: 0x42, count: 100))
        #expect(try RawFile.read("\(path).corrupt-\(testNow)-shm") == Array(repeating: 0x43, count: 100))
    }

    @Test func twoRecoveriesInTheSameSecondKeepBothFiles() throws {
        let scratch = try directory(holding: Array("first".utf8))
        let path = scratch.path + "/" + Store.fileName
        try Store.open(directory: scratch.path, now: testNow).close()
        try RawFile.write(path, Array("second".utf8))
        let store = try Store.open(directory: scratch.path, now: testNow)
        #expect(store.recoveryNote?.hasSuffix("moved aside to \(path).corrupt-\(testNow)-1") == true)
        #expect(try RawFile.read("\(path).corrupt-\(testNow)") == Array("first".utf8))
        #expect(try RawFile.read("\(path).corrupt-\(testNow)-1") == Array("second".utf8))
        #expect(try store.notes().count == 1)  // the first note went with the first replaced file
    }

    @Test func aDirectoryWhereTheFileShouldBeIsAClearErrorAndLeftAlone() throws {
        let scratch = try ScratchDirectory("phosra-gate-store")
        let path = scratch.path + "/" + Store.fileName
        RawFile.makeDirectory(path)
        #expect(throws: StoreError.notAFile(path: path)) { try Store.open(directory: scratch.path, now: testNow) }
        #expect(throws: StoreError.notAFile(path: path)) { try Store.openReadOnly(directory: scratch.path) }
        #expect(RawFile.list(scratch.path) == [Store.fileName])
    }
}

extension RecoveryTests {
    @Test func scribbledPagesFailTheIntegrityCheckAndAreMovedAside() throws {
        let fixture = try StoreFixture()
        let rows = (0..<3000).map { hit("site\($0).example", client: "10.0.0.\($0 % 250)") }
        try fixture.store.enqueue(rows, maxRows: 100_000)
        fixture.store.close()
        var bytes = try RawFile.read(fixture.databasePath)
        // Keep page 1 (header and schema) intact; scribble over the middle of the file.
        var generator = SeededGenerator(seed: 3)
        for index in (bytes.count / 2)..<(bytes.count / 2 + 8192) {
            bytes[index] = UInt8.random(in: 0...255, using: &generator)
        }
        try RawFile.write(fixture.databasePath, bytes)
        let store = try fixture.reopen(now: testNow + 2)
        let note = try #require(store.recoveryNote)
        #expect(note.hasSuffix("moved aside to \(fixture.databasePath).corrupt-\(testNow + 2)"))
        #expect(try store.queueCounts(profile: "alice").queued == 0)
    }
}

extension RecoveryTests {
    @Test func findingsOfTheIntegrityCheckAreNamedInTheNote() throws {
        let fixture = try StoreFixture()
        try fixture.store.enqueue((0..<3000).map { hit("site\($0).example") }, maxRows: 100_000)
        let batch = try #require(try fixture.store.nextBatch(profile: "alice", now: testNow))
        try fixture.store.completeBatch(id: batch.id)  // frees pages
        let freePages = try fixture.store.testInteger("PRAGMA freelist_count")
        #expect(freePages > 0)
        fixture.store.close()
        var bytes = try RawFile.read(fixture.databasePath)
        bytes[36...39] = [0, 0, 0x10, 0]  // the header's free-page count, now wrong
        try RawFile.write(fixture.databasePath, bytes)
        let store = try fixture.reopen()
        let note = try #require(store.recoveryNote)
        #expect(note.contains("was corrupt (integrity check failed: Main freelist: size is "))
        #expect(note.contains(" but should be 4096); moved aside to "))
    }
}
