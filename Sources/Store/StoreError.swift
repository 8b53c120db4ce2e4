import CSQLite
import SystemIO

/// Everything the store can fail with: what failed and on which file. The Gateway adds
/// its own context (which command, which profile); a description is one readable line.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A SQLite call failed: the C function, its extended result code, SQLite's own
    /// message and the database file.
    case sqlite(call: String, code: Int32, message: String, path: String)
    /// A file-system call failed (creating the state directory, moving a file aside).
    case system(SystemError)
    /// The state directory exists but this process cannot create files in it.
    case directoryNotWritable(path: String)
    /// Something other than a directory is where the state directory should be.
    case notADirectory(path: String)
    /// A directory, socket or device is where the database file should be. Never moved
    /// aside: it was put there by hand, and deleting or renaming it is the operator's call.
    case notAFile(path: String)
    /// The database was written by a newer phosra-gate (its `user_version` is higher than
    /// any migration this build knows). Never downgraded and never moved aside.
    case newerSchema(path: String, found: Int, supported: Int)
    /// Numbered migration `version` failed on this file (rolled back); SQLite's code and message.
    case migration(version: Int, code: Int32, message: String, path: String)
    /// `openReadOnly` found the file damaged; the next `Store.open` will move it aside.
    case damaged(path: String, reason: String)
    /// `openReadOnly` found a database older than this build (the daemon has not
    /// migrated it yet).
    case olderSchema(path: String, found: Int, expected: Int)
    /// `openReadOnly` found no database: neither `run` nor `sync` has created one yet.
    case missing(path: String)
    /// The store was closed; nothing more can be read or written through it.
    case closed(path: String)

    public var description: String {
        switch self {
        case .sqlite(let call, let code, let message, let path):
            return "\(path): \(call) failed: \(message) (SQLite code \(code))"
        case .system(let error):
            return error.description
        case .migration(let version, let code, let message, let path):
            return "\(path): migration \(version) failed: \(message) (SQLite code \(code))"
        case .directoryNotWritable(let path):
            return "\(path): state directory is not writable"
        case .notADirectory(let path):
            return "\(path): state directory path is not a directory"
        case .notAFile(let path):
            return "\(path): expected the database file, found a directory or special file; move it away"
        case .newerSchema(let path, let found, let supported):
            return
                "\(path): written by a newer phosra-gate (schema \(found), this build knows up to \(supported)); not downgraded"
        case .damaged(let path, let reason):
            return "\(path): database is damaged (\(reason)); `phosra-gate run` will move it aside and start afresh"
        case .olderSchema(let path, let found, let expected):
            return
                "\(path): schema \(found) is older than this build's \(expected); start `phosra-gate run` to migrate it"
        case .missing(let path):
            return "\(path): no database yet (neither `run` nor `sync` has created it)"
        case .closed(let path):
            return "\(path): store is closed"
        }
    }

    /// Whether the database file itself is damaged or foreign — the cases where moving it
    /// aside and starting fresh is the right recovery. Environmental failures (busy, disk
    /// full, permissions, I/O errors, out of memory) are not: a fresh file would not help,
    /// and moving a good database aside would lose the hit queue.
    var meansDamagedFile: Bool {
        switch self {
        case .sqlite(_, let code, _, _):
            return [SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_FORMAT].contains(code & 0xFF)
        case .migration(_, let code, _, _):
            // A migration that fails on SQL (a table of that name already there, a
            // constraint) means a foreign or damaged file; one that fails on the
            // environment would fail on a fresh file too.
            return ![
                SQLITE_BUSY, SQLITE_LOCKED, SQLITE_NOMEM, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL,
                SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_INTERRUPT, SQLITE_AUTH,
            ].contains(code & 0xFF)
        default:
            return false
        }
    }

    /// Why the database is being replaced, for the recovery note ("file is not a database").
    var damageReason: String {
        switch self {
        case .sqlite(_, _, let message, _): return message
        case .migration(let version, _, let message, _): return "migration \(version) failed: \(message)"
        default: return description
        }
    }
}
