import CSQLite
import SystemIO

/// One SQLite connection with a cache of prepared statements.
///
/// Not thread-safe, on purpose: a `Store` owns exactly one `Database` and serialises
/// every use through its mutex, so the connection is opened with `SQLITE_OPEN_NOMUTEX`
/// and SQLite's own per-call locking is skipped. Closed (statements finalised first)
/// when the last reference goes.
final class Database {
    enum Mode { case readWrite, readOnly }

    let path: String
    private let handle: OpaquePointer
    /// Prepared statements by their SQL text. Every statement in this module is a fixed
    /// string literal, so the cache is bounded by the number of distinct queries.
    private var statements: [String: Statement] = [:]
    /// Paces every statement on this connection: the flush after a burst of blocks (ten
    /// thousand names) is hundreds of milliseconds of SQLite's CPU, which a thread in the
    /// idle class must give back in slices (`Pacer`). SQLite calls `checkpoint` through its
    /// progress handler.
    var pacer: Pacer

    /// SQLite's virtual machine instructions between two calls of the progress handler. An
    /// upsert of one hit is about 13, and SQLite counts across the steps of a statement: a
    /// call every eight rows or so, tens of microseconds of work.
    static let instructionsPerCheckpoint: Int32 = 100

    init(path: String, mode: Mode, pacer: Pacer = Pacer()) throws(StoreError) {
        // Extended result codes from the start, so `SQLITE_IOERR_SHORT_READ` and friends
        // reach the error instead of a bare `SQLITE_IOERR`.
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        switch mode {
        case .readWrite: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        }
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(opened)
            throw .sqlite(call: "sqlite3_open_v2", code: code, message: message, path: path)
        }
        self.path = path
        handle = opened
        self.pacer = pacer
        // Unretained: the handler belongs to the handle, which this object closes in deinit.
        sqlite3_progress_handler(
            handle, Self.instructionsPerCheckpoint,
            { context in
                Unmanaged<Database>.fromOpaque(context!).takeUnretainedValue().pacer.checkpoint()
                return 0
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement.handle) }
        sqlite3_close_v2(handle)
    }

    /// The error for a failed call on this connection, with SQLite's message.
    func failure(_ call: String, _ code: Int32) -> StoreError {
        .sqlite(
            call: call, code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)),
            path: path
        )
        .withFallbackCode(code)
    }

    /// Waits up to `milliseconds` for another connection's lock instead of failing with
    /// `SQLITE_BUSY` at once.
    func setBusyTimeout(milliseconds: Int32) throws(StoreError) {
        let code = sqlite3_busy_timeout(handle, milliseconds)
        guard code == SQLITE_OK else { throw failure("sqlite3_busy_timeout", code) }
    }

    /// Runs SQL text that may hold several statements and binds nothing: migrations and
    /// pragmas, which are fixed strings in this module.
    func execute(_ sql: String) throws(StoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            throw .sqlite(call: "sqlite3_exec", code: sqlite3_extended_errcode(handle), message: text, path: path)
        }
    }

    /// Runs one statement to completion with bound values (rows it returns are ignored).
    func run(_ sql: String, _ values: any SQLBindable...) throws(StoreError) {
        try statement(sql).step(values, self) { _ throws(StoreError) in true }
    }

    /// Every row of one query, each turned into a value by `make`.
    func rows<T>(
        _ sql: String, _ values: any SQLBindable..., make: (Row) throws(StoreError) -> T
    ) throws(StoreError) -> [T] {
        var result: [T] = []
        try statement(sql).step(values, self) { row throws(StoreError) in
            result.append(try make(row))
            return true
        }
        return result
    }

    /// Hands rows to `body` one at a time until it returns false: for walks that may stop
    /// early without loading every row.
    func forEach(_ sql: String, _ values: any SQLBindable..., body: (Row) throws(StoreError) -> Bool) throws(StoreError)
    {
        try statement(sql).step(values, self, body)
    }

    /// The first row of a query, or nil when it returns none.
    func firstRow<T>(
        _ sql: String, _ values: any SQLBindable..., make: (Row) throws(StoreError) -> T
    ) throws(StoreError) -> T? {
        var result: T?
        try statement(sql).step(values, self) { row throws(StoreError) in
            result = try make(row)
            return false
        }
        return result
    }

    /// The first column of the first row as an integer (0 when there is no row or it is NULL).
    func integer(_ sql: String, _ values: any SQLBindable...) throws(StoreError) -> Int {
        var result = 0
        try statement(sql).step(values, self) { row throws(StoreError) in
            result = row.int(0)
            return false
        }
        return result
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs `body` in one write transaction: committed when it returns, rolled back when
    /// it throws. `BEGIN IMMEDIATE` takes the write lock up front, so a busy database is
    /// waited for (busy timeout) at the start rather than failing half-way.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try run("BEGIN IMMEDIATE")
        do throws(StoreError) {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            // SQLite may have rolled back already (some errors end the transaction).
            if sqlite3_get_autocommit(handle) == 0 { try? run("ROLLBACK") }
            throw error
        }
    }

    private func statement(_ sql: String) throws(StoreError) -> Statement {
        if let cached = statements[sql] { return cached }
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard code == SQLITE_OK, let prepared else { throw failure("sqlite3_prepare_v3", code) }
        let statement = Statement(handle: prepared)
        statements[sql] = statement
        return statement
    }
}

extension StoreError {
    /// Keeps the call's own result code when the connection reports none (`SQLITE_OK`).
    fileprivate func withFallbackCode(_ code: Int32) -> StoreError {
        guard case .sqlite(let call, let reported, let message, let path) = self, reported == SQLITE_OK else {
            return self
        }
        return .sqlite(call: call, code: code, message: message, path: path)
    }
}
