import CSQLite
import DomainMatch
import Glibc
import Locks

/// `sqlite`: the shape of Pi-hole's gravity database. A real SQLite file on disk with one
/// table of the normalised names as its primary key (`WITHOUT ROWID`: the index is the
/// table); a lookup runs one prepared `SELECT` per suffix of the query, longest first,
/// binding the suffix's bytes in place. The file is read through SQLite's memory map and
/// measured warm. Each thread takes its own connection from a small pool, as a server
/// would.
public final class SQLiteMatcher: NameMatcher {
    public let listCount: Int
    public let path: String
    private let idle = Lock<[Connection]>([])

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Writes the database file at `path` (replacing one there) from the lists.
    public static func create(path: String, lists: [[DomainName]]) throws(Failure) {
        _ = unlink(path)
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK,
            let handle
        else { throw Failure(description: "\(path): cannot create the database") }
        defer { sqlite3_close_v2(handle) }
        try execute(
            handle,
            """
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
            CREATE TABLE names (name TEXT PRIMARY KEY, mask INTEGER NOT NULL) WITHOUT ROWID;
            BEGIN;
            """)
        var insert: OpaquePointer?
        let sql = "INSERT INTO names (name, mask) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET mask = mask | ?2"
        guard sqlite3_prepare_v2(handle, sql, -1, &insert, nil) == SQLITE_OK, let insert else {
            throw Failure(description: "prepare: \(String(cString: sqlite3_errmsg(handle)))")
        }
        defer { sqlite3_finalize(insert) }
        // In key order, so the B-tree is filled left to right.
        var all: [(DomainName, Int64)] = []
        for (list, names) in lists.enumerated() { all += names.map { ($0, Int64(1) << list) } }
        all.sort { $0.0 < $1.0 }
        for (name, mask) in all {
            let code = name.bytes.withUnsafeBytes { bytes in
                sqlite3_bind_text(insert, 1, bytes.baseAddress!, Int32(bytes.count), pg_sqlite_transient())
                sqlite3_bind_int64(insert, 2, mask)
                defer { sqlite3_reset(insert) }
                return sqlite3_step(insert)
            }
            guard code == SQLITE_DONE else {
                throw Failure(description: "insert: \(String(cString: sqlite3_errmsg(handle)))")
            }
        }
        try execute(handle, "COMMIT; ANALYZE;")
    }

    private static func execute(_ handle: OpaquePointer, _ sql: String) throws(Failure) {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw Failure(description: String(cString: sqlite3_errmsg(handle)))
        }
    }

    /// Opens the file read-only; connections are made as threads need them.
    public init(path: String, listCount: Int) throws(Failure) {
        self.path = path
        self.listCount = max(1, listCount)
        let first = try Connection(path: path)
        idle.withLock { $0.append(first) }
    }

    public func match(_ name: DomainName, into depths: inout MatchDepths) {
        name.bytes.withUnsafeBytes { match(bytes: $0, labelCount: name.labelCount, into: &depths) }
    }

    public func match(bytes: UnsafeRawBufferPointer, labelCount: Int, into depths: inout MatchDepths) {
        depths = MatchDepths()
        let connection = idle.withLock { $0.popLast() } ?? (try? Connection(path: path))
        guard let connection else { return }
        defer { idle.withLock { $0.append(connection) } }
        let all: Int64 = (1 << Int64(listCount)) - 1
        var found: Int64 = 0
        var start = 0
        var labels = labelCount
        while true {
            let mask = connection.lookup(bytes.baseAddress! + start, bytes.count - start)
            var fresh = mask & ~found
            found |= mask
            while fresh != 0 {
                depths[fresh.trailingZeroBitCount] = labels
                fresh &= fresh - 1
            }
            if found == all { return }
            while start < bytes.count, bytes[start] != UInt8(ascii: ".") { start += 1 }
            if start == bytes.count { return }
            start += 1
            labels -= 1
        }
    }

    /// One read-only connection and its prepared statement.
    final class Connection: @unchecked Sendable {
        // Sendable: used by one thread at a time, handed over through the pool's lock.
        let handle: OpaquePointer
        let select: OpaquePointer

        init(path: String) throws(Failure) {
            var handle: OpaquePointer?
            guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
                let handle
            else {
                sqlite3_close_v2(handle)
                throw Failure(description: "\(path): cannot open the database")
            }
            // Reads through a memory map of the whole file: no copy into SQLite's page cache.
            sqlite3_exec(handle, "PRAGMA mmap_size = 1073741824; PRAGMA query_only = 1;", nil, nil, nil)
            var select: OpaquePointer?
            let sql = "SELECT mask FROM names WHERE name = ?1"
            guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &select, nil) == SQLITE_OK,
                let select
            else {
                sqlite3_close_v2(handle)
                throw Failure(description: "\(path): cannot prepare the lookup")
            }
            self.handle = handle
            self.select = select
        }

        /// The mask of the name with these bytes, 0 when not there.
        @inline(__always)
        func lookup(_ bytes: UnsafeRawPointer, _ count: Int) -> Int64 {
            // SQLITE_STATIC (nil): the bytes outlive the step; nothing is copied.
            sqlite3_bind_text(select, 1, bytes.assumingMemoryBound(to: CChar.self), Int32(count), nil)
            defer { sqlite3_reset(select) }
            return sqlite3_step(select) == SQLITE_ROW ? sqlite3_column_int64(select, 0) : 0
        }

        deinit {
            sqlite3_finalize(select)
            sqlite3_close_v2(handle)
        }
    }
}
