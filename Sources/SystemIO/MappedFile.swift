import Glibc

/// A read-only private mapping of a whole file. The caller owns it and unmaps it.
public struct MappedFile {
    public let base: UnsafeRawPointer
    public let count: Int
    /// Device and inode of the mapped file: a path renamed over shows a new one.
    public let identity: FileIdentity

    public static func map(_ path: String) throws(SystemError) -> MappedFile {
        let fd = try systemCall("open", subject: path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        var info = stat()
        _ = try systemCall("fstat", subject: path) { fstat(fd, &info) }
        let size = Int(info.st_size)
        guard size > 0 else { throw SystemError("mmap", errno: EINVAL, subject: path) }
        guard let pointer = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), pointer != MAP_FAILED else {
            throw SystemError("mmap", errno: Glibc.errno, subject: path)
        }
        return MappedFile(base: UnsafeRawPointer(pointer), count: size, identity: FileIdentity(info))
    }

    public static func unmap(_ base: UnsafeRawPointer, _ count: Int) {
        munmap(UnsafeMutableRawPointer(mutating: base), count)
    }
}

/// Which file a path names right now (device, inode, size, modification time).
public struct FileIdentity: Equatable, Sendable {
    public let device: UInt64
    public let inode: UInt64
    public let size: Int64
    public let modifiedNanoseconds: Int64

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modifiedNanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }

    public static func of(_ path: String) -> FileIdentity? {
        var info = stat()
        return stat(path, &info) == 0 ? FileIdentity(info) : nil
    }
}
