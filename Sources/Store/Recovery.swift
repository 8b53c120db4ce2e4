import CSQLite
import Glibc
import SystemIO

/// The file-system side of opening: the state directory, damaged-file detection that
/// SQLite cannot do for us, and moving a damaged database aside.
enum Recovery {
    /// The companions SQLite keeps beside a database; they move with it.
    static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// Creates the state directory when missing and checks this process can create files
    /// in it (SQLite needs that for `-wal` and `-shm`, not just the database file).
    static func prepareDirectory(_ directory: String) throws(StoreError) {
        if Files.exists(directory), !Files.isDirectory(directory) { throw .notADirectory(path: directory) }
        do throws(SystemError) {
            try Files.makeDirectories(directory, mode: 0o750)
        } catch {
            throw .system(error)
        }
        guard access(directory, W_OK | X_OK) == 0 else { throw .directoryNotWritable(path: directory) }
    }

    /// Why the file at `path` is unusable, decided before SQLite opens it, or nil. A
    /// directory or special file there is an error, not damage: it is not ours to move.
    ///
    /// A zero-length file with no WAL content is damage: SQLite would happily treat it as
    /// a new empty database, but phosra-gate writes the header when it creates a file, so
    /// an empty one means a file system lost what was there, and the operator should hear
    /// of it. A file without SQLite's 16-byte magic is damage too; it is caught here
    /// rather than by SQLite because SQLite, when it closes a connection to such a file,
    /// deletes the `-wal` and `-shm` beside it, which should move aside with it.
    static func fileDamage(_ path: String) throws(StoreError) -> String? {
        guard Files.exists(path) else { return nil }
        guard let status = try? Files.status(path), status.isRegularFile else { throw .notAFile(path: path) }
        if status.size == 0 {
            let walSize = (try? Files.status(path + "-wal"))?.size ?? 0
            return walSize == 0 ? "file is empty, 0 bytes" : nil
        }
        guard let head = firstBytes(path, count: sqliteMagic.count) else { return nil }  // let SQLite say why
        return head == sqliteMagic ? nil : "file is not a database"
    }

    /// The first 16 bytes of every SQLite 3 database file.
    private static let sqliteMagic = Array("SQLite format 3\0".utf8)

    private static func firstBytes(_ path: String, count: Int) -> [UInt8]? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, 0) }
        return read < 0 ? nil : Array(bytes[0..<read])
    }

    /// `PRAGMA quick_check`: the database's structure without the slow index contents
    /// check. Anything but one `ok` row is damage (SQLITE_CORRUPT, with the first finding).
    static func quickCheck(_ database: Database) throws(StoreError) {
        let findings = try database.rows("PRAGMA quick_check(5)") { $0.text(0) }
        guard findings != ["ok"] else { return }
        // A finding may span lines under a "*** in database main ***" heading; the note
        // is one line, so it names the first real finding.
        let lines = findings.flatMap { $0.split(separator: "\n").map(String.init) }
        let first = lines.first { !$0.hasPrefix("***") } ?? "no result"
        throw .sqlite(
            call: "PRAGMA quick_check", code: SQLITE_CORRUPT,
            message: "integrity check failed: \(first)", path: database.path)
    }

    /// Renames `path` (and its `-wal`, `-shm`, `-journal`) to `path.corrupt-<now>`, with a
    /// `-N` suffix when that name is taken, then syncs the directory so the rename
    /// survives a power cut. Returns the new path of the database file.
    static func moveAside(_ path: String, now: Int64) throws(StoreError) -> String {
        let base = "\(path).corrupt-\(now)"
        var aside = base
        var attempt = 1
        while ([""] + companionSuffixes).contains(where: { Files.exists(aside + $0) }) {
            aside = "\(base)-\(attempt)"
            attempt += 1
        }
        do throws(SystemError) {
            if Files.exists(path) {
                _ = try systemCall("rename", subject: path) { rename(path, aside) }
            }
            for suffix in companionSuffixes where Files.exists(path + suffix) {
                _ = try systemCall("rename", subject: path + suffix) { rename(path + suffix, aside + suffix) }
            }
        } catch {
            throw .system(error)
        }
        syncDirectory(Files.directory(of: path))
        return aside
    }

    /// Flushes a directory's entries (renames) to disk; best effort.
    private static func syncDirectory(_ directory: String) {
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        Glibc.close(fd)
    }
}
