import CSQLite
import Glibc
import Locks
import SystemIO

/// The daemon's SQLite store in the state directory (`DIR/phosra-gate.db`): cached
/// policies, sync state, the hit queue and its batches, the dead-letter table, hit
/// history, hourly activity, the heartbeat and notes. It knows nothing of policies, DNS
/// or HTTP: it keeps rows.
///
/// Thread safety: one connection, and every call takes the store's mutex for its whole
/// duration, so calls from any thread are serialised; each call that writes is one
/// transaction. `run` owns the writing store; `status` and `hits` use `openReadOnly`
/// beside it (WAL lets them read while `run` writes).
///
/// Durability: WAL with `synchronous = FULL`, so a call that returned has been fsynced —
/// the hit aggregator flushes at most every 5 s, and a power cut loses at most those 5 s.
public final class Store: Sendable {
    /// The database file's name inside the state directory.
    public static let fileName = "phosra-gate.db"
    /// How long a call waits for another process's lock before failing with SQLITE_BUSY.
    static let busyTimeoutMilliseconds: Int32 = 5000
    /// The writing connection's page cache, KiB (SQLite's default is 2,000). The integrity
    /// check at open reads every page, and the default cache then keeps 2 MB of them for
    /// the daemon's life; a flush appends to a few B-tree pages and finds the others in the
    /// kernel's page cache, so a smaller cache costs reads off the loops, not memory.
    static let pageCacheKiB = 512

    /// The database file.
    public let path: String
    /// Opened with `openReadOnly`: every write fails with SQLite's read-only error.
    public let isReadOnly: Bool
    /// Set when `open` found the database damaged and replaced it ("… was corrupt (file is
    /// not a database); moved aside to …"). The same line is kept in `notes()`.
    public let recoveryNote: String?

    private let connection: Lock<Database?>

    private init(database: consuming sending Database, readOnly: Bool, recoveryNote: String?) {
        path = database.path
        isReadOnly = readOnly
        self.recoveryNote = recoveryNote
        connection = Lock(database)
    }

    /// Opens or creates `directory/phosra-gate.db` for writing (the directory is created
    /// too), applies pending migrations, and recovers from a damaged file: one that is
    /// not a database, is empty, fails `PRAGMA quick_check` or fails a migration is moved
    /// aside to `phosra-gate.db.corrupt-<now>` (with its `-wal` and `-shm`) and a fresh
    /// database takes its place, with `recoveryNote` set and persisted in `notes()`.
    /// Otherwise it throws: a directory that cannot be written, a directory where the file
    /// should be, a database from a newer build, a fresh database that fails too (a call
    /// never moves aside the file it created itself).
    ///
    /// `now` is Unix seconds, for the moved-aside name and the note.
    public static func open(directory: String, now: Int64) throws(StoreError) -> Store {
        try Recovery.prepareDirectory(directory)
        let path = directory + "/" + fileName
        var damage = try Recovery.fileDamage(path)
        var opened: Database?
        if damage == nil {
            do throws(StoreError) {
                opened = try connect(path)
            } catch {
                guard error.meansDamagedFile else { throw error }
                damage = error.damageReason
            }
        }
        var note: String?
        if let damage {
            let aside = try Recovery.moveAside(path, now: now)
            note = "\(path) was corrupt (\(damage)); moved aside to \(aside)"
        }
        let database: Database
        if let opened { database = opened } else { database = try connect(path) }
        if let note {
            try database.transaction { () throws(StoreError) in
                try database.run("INSERT INTO notes (created_at, text) VALUES (?, ?)", now, note)
            }
        }
        return Store(database: database, readOnly: false, recoveryNote: note)
    }

    /// Opens the database for reading only, beside a running `run` (`status`, `hits`).
    /// Never creates, migrates or recovers anything: a missing, damaged, older or newer
    /// database is an error for the caller to show.
    public static func openReadOnly(directory: String) throws(StoreError) -> Store {
        let path = directory + "/" + fileName
        guard Files.exists(path) else { throw .missing(path: path) }
        // Checked before SQLite opens it, which would delete the `-wal` and `-shm` of a
        // foreign file that `run` is to move aside with it.
        if let damage = try Recovery.fileDamage(path) { throw .damaged(path: path, reason: damage) }
        let database = try Database(path: path, mode: .readOnly)
        try database.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
        let version = try Migrations.version(of: database)
        guard version <= Migrations.latest else {
            throw .newerSchema(path: path, found: version, supported: Migrations.latest)
        }
        guard version == Migrations.latest else {
            throw .olderSchema(path: path, found: version, expected: Migrations.latest)
        }
        return Store(database: database, readOnly: true, recoveryNote: nil)
    }

    /// Closes the connection (a WAL checkpoint happens when the last one closes). Later
    /// calls throw `.closed`. Without it, the connection closes when the store is freed.
    public func close() {
        connection.withLock { slot in
            // SQLite's advice for long-lived writers: refresh planner statistics on close.
            if !isReadOnly { try? slot?.execute("PRAGMA optimize") }
            slot = nil
        }
    }

    /// SQLite's journal mode for this file (`wal` unless the file system refused it).
    public func journalMode() throws(StoreError) -> String {
        try withDatabase { database throws(StoreError) in
            try database.firstRow("PRAGMA journal_mode") { $0.text(0) } ?? ""
        }
    }

    /// The schema version of the file (`PRAGMA user_version`).
    public func schemaVersion() throws(StoreError) -> Int {
        try withDatabase { database throws(StoreError) in try Migrations.version(of: database) }
    }

    /// The schema version this build creates and reads.
    public static var supportedSchemaVersion: Int { Migrations.latest }

    /// Runs `body` on the connection while holding the store's mutex.
    func withDatabase<T: Sendable>(_ body: (Database) throws(StoreError) -> T) throws(StoreError) -> T {
        try connection.withLock { (slot: inout sending Database?) throws(StoreError) -> T in
            guard let database = slot else { throw StoreError.closed(path: path) }
            return try body(database)
        }
    }

    /// Runs `body` in one write transaction while holding the store's mutex.
    func write<T: Sendable>(_ body: (Database) throws(StoreError) -> T) throws(StoreError) -> T {
        try withDatabase { database throws(StoreError) in
            try database.transaction { () throws(StoreError) in try body(database) }
        }
    }

    /// Opens a writable connection and brings it to this build's schema. Pragmas first:
    /// the busy timeout so every later step waits for a lock instead of failing, WAL so
    /// `status` can read beside `run`, FULL sync for durable commits, foreign keys for
    /// the cascades, a cap on the WAL file left behind after checkpoints, and a small page
    /// cache (`pageCacheKiB`). Then the version check (a newer file is refused before
    /// anything else touches it), the integrity check, and the migrations.
    private static func connect(_ path: String) throws(StoreError) -> Database {
        let database = try Database(path: path, mode: .readWrite)
        try database.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
        try database.execute("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA journal_size_limit = 8388608")
        try database.execute("PRAGMA cache_size = -\(pageCacheKiB)")
        let version = try Migrations.version(of: database)
        guard version <= Migrations.latest else {
            throw .newerSchema(path: path, found: version, supported: Migrations.latest)
        }
        try Recovery.quickCheck(database)
        try Migrations.apply(to: database)
        return database
    }
}
