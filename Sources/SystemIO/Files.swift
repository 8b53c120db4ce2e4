import Glibc

/// What `stat(2)` says about a path.
public struct FileStatus: Equatable, Sendable {
    public let isDirectory: Bool
    public let isRegularFile: Bool
    public let size: Int64
    /// Modification time in nanoseconds since the epoch (a cache key, not a clock).
    public let modifiedNanoseconds: Int64
    public let mode: UInt32
}

/// Small, blocking file helpers for start-up and commands (never on an event loop).
public enum Files {
    /// Files larger than this are refused rather than read into memory.
    public static let defaultReadLimit = 256 << 20

    public static func read(_ path: String, limit: Int = defaultReadLimit) throws(SystemError) -> [UInt8] {
        let fd = try systemCall("open", subject: path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        let info = try status(fd: fd, path: path)
        guard !info.isDirectory else { throw SystemError("read", errno: EISDIR, subject: path) }
        guard info.size <= Int64(limit) else { throw SystemError("read", errno: EFBIG, subject: path) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.size) + 1)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let count = try systemCall("read", subject: path) { Glibc.read(fd, chunk.baseAddress, chunk.count) }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= limit else { throw SystemError("read", errno: EFBIG, subject: path) }
        }
        return bytes
    }

    public static func status(_ path: String) throws(SystemError) -> FileStatus {
        var info = stat()
        _ = try systemCall("stat", subject: path) { stat(path, &info) }
        return FileStatus(info)
    }

    private static func status(fd: Int32, path: String) throws(SystemError) -> FileStatus {
        var info = stat()
        _ = try systemCall("fstat", subject: path) { fstat(fd, &info) }
        return FileStatus(info)
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    public static func isDirectory(_ path: String) -> Bool { (try? status(path))?.isDirectory ?? false }

    /// Entry names of a directory, sorted bytewise, without `.` and `..`.
    public static func list(_ path: String) throws(SystemError) -> [String] {
        guard let dir = opendir(path) else { throw SystemError("opendir", errno: Glibc.errno, subject: path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Writes to a temporary file beside `path`, flushes it and renames it into place,
    /// so a reader sees the old file or the new one, never half of one.
    public static func writeAtomically(
        _ path: String, _ bytes: [UInt8], mode: mode_t = 0o644, owner: Owner? = nil
    ) throws(SystemError) {
        var result: Result<Void, SystemError> = .success(())
        bytes.withUnsafeBytes { buffer in
            do throws(SystemError) { try writeAtomically(path, bytes: buffer, mode: mode, owner: owner) } catch {
                result = .failure(error)
            }
        }
        try result.get()
    }

    /// The directory part of a path (`"."` when there is none).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The path of the running executable, resolved through `/proc/self/exe`.
    public static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension FileStatus {
    init(_ info: stat) {
        isDirectory = info.st_mode & S_IFMT == S_IFDIR
        isRegularFile = info.st_mode & S_IFMT == S_IFREG
        size = Int64(info.st_size)
        modifiedNanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        mode = info.st_mode
    }
}

extension Files {
    /// Reads a file in chunks of `chunkSize`, handing each to `body` (the buffer is only
    /// valid during the call), so a large list never sits in memory whole.
    public static func forEachChunk(
        _ path: String, chunkSize: Int = 1 << 20,
        _ body: (UnsafeRawBufferPointer) -> Void
    ) throws(SystemError) {
        let fd = try systemCall("open", subject: path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let count = try systemCall("read", subject: path) { Glibc.read(fd, chunk.baseAddress, chunk.count) }
            if count == 0 { return }
            body(UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
        }
    }

    /// Like `writeAtomically(_:_:mode:)`, from raw memory.
    public static func writeAtomically(
        _ path: String, bytes: UnsafeRawBufferPointer, mode: mode_t = 0o644, owner: Owner? = nil
    ) throws(SystemError) {
        // A fresh name, made here or not at all: never a file or link already there (a
        // link planted by whoever may write the directory would otherwise be followed, and
        // with `owner`, its target given away).
        let temporary = path + ".tmp.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let fd = try systemCall("open", subject: temporary) {
            open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        }
        var done = false
        defer {
            close(fd)
            if !done { unlink(temporary) }
        }
        var offset = 0
        while offset < bytes.count {
            offset += try systemCall("write", subject: temporary) {
                write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            }
        }
        if let owner { _ = try systemCall("fchown", subject: temporary) { fchown(fd, owner.user, owner.group) } }
        _ = try systemCall("fsync", subject: temporary) { fsync(fd) }
        _ = try systemCall("rename", subject: path) { rename(temporary, path) }
        done = true
    }

    /// Who owns a file: a file root writes for a daemon that runs as its own user is given
    /// that user (the owner of its state directory).
    public struct Owner: Equatable, Sendable {
        public let user: uid_t
        public let group: gid_t

        public init(user: uid_t, group: gid_t) {
            self.user = user
            self.group = group
        }
    }

    /// The owner of `path`.
    public static func owner(of path: String) throws(SystemError) -> Owner {
        var info = stat()
        _ = try systemCall("stat", subject: path) { stat(path, &info) }
        return Owner(user: info.st_uid, group: info.st_gid)
    }

    /// Creates a directory and its parents (like `mkdir -p`).
    public static func makeDirectories(_ path: String, mode: mode_t = 0o755) throws(SystemError) {
        if isDirectory(path) { return }
        let parent = directory(of: path)
        if parent != path, parent != ".", parent != "/" { try makeDirectories(parent, mode: mode) }
        if mkdir(path, mode) != 0, Glibc.errno != EEXIST {
            throw SystemError("mkdir", errno: Glibc.errno, subject: path)
        }
    }
}
