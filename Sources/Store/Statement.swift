import CSQLite

/// A value bound to a `?` parameter. Values only ever reach SQL this way, never by
/// building SQL text.
enum SQLValue {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null
}

/// A Swift value that binds as one SQL value.
protocol SQLBindable {
    var sqlValue: SQLValue { get }
}

extension Int: SQLBindable { var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Int64: SQLBindable { var sqlValue: SQLValue { .integer(self) } }
extension Int32: SQLBindable { var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Bool: SQLBindable { var sqlValue: SQLValue { .integer(self ? 1 : 0) } }
extension String: SQLBindable { var sqlValue: SQLValue { .text(self) } }
extension Array: SQLBindable where Element == UInt8 { var sqlValue: SQLValue { .blob(self) } }
extension Optional: SQLBindable where Wrapped: SQLBindable {
    var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// A cached prepared statement. Used only inside `Database`, under the store's mutex.
final class Statement {
    let handle: OpaquePointer

    init(handle: OpaquePointer) { self.handle = handle }

    /// Binds `values` to parameters 1…n, steps through the rows handing each to `each`
    /// until it returns false or the rows end, then resets the statement and clears its
    /// bindings for the next use.
    func step(
        _ values: [any SQLBindable], _ database: Database, _ each: (Row) throws(StoreError) -> Bool
    ) throws(StoreError) {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        for (offset, value) in values.enumerated() {
            let code = bind(value.sqlValue, at: Int32(offset + 1))
            guard code == SQLITE_OK else { throw database.failure("sqlite3_bind", code) }
        }
        while true {
            let code = sqlite3_step(handle)
            switch code {
            case SQLITE_ROW: if try !each(Row(handle: handle)) { return }
            case SQLITE_DONE: return
            default: throw database.failure("sqlite3_step", code)
            }
        }
    }

    private func bind(_ value: SQLValue, at index: Int32) -> Int32 {
        switch value {
        case .integer(let number):
            return sqlite3_bind_int64(handle, index, number)
        case .null:
            return sqlite3_bind_null(handle, index)
        case .text(var text):
            // A NULL pointer would bind SQL NULL, so the empty string gets a real one.
            return text.withUTF8 { bytes in
                guard let base = bytes.baseAddress, bytes.count > 0 else {
                    return sqlite3_bind_text(handle, index, "", 0, pg_sqlite_transient())
                }
                return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite3_bind_text(handle, index, $0, Int32(bytes.count), pg_sqlite_transient())
                }
            }
        case .blob(let bytes):
            // Same for blobs: an empty one is a zero-length blob, not NULL.
            guard !bytes.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return bytes.withUnsafeBytes {
                sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), pg_sqlite_transient())
            }
        }
    }
}

/// The current row of a stepping statement; valid only inside the callback it is given to.
struct Row {
    fileprivate let handle: OpaquePointer

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }
    func bool(_ column: Int32) -> Bool { sqlite3_column_int64(handle, column) != 0 }
    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    func text(_ column: Int32) -> String {
        // `sqlite3_column_text` first, then `_bytes`: that order gives the UTF-8 length.
        guard let base = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    func blob(_ column: Int32) -> [UInt8] {
        guard let base = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }
}
