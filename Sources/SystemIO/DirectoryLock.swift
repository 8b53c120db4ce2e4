import Glibc

/// An exclusive lock on a directory, held for the life of the process: a second
/// `phosra-gate run` on the same state directory is refused, so `SO_REUSEPORT` can never
/// silently split traffic between two instances (docs/dns.md#listeners).
public final class DirectoryLock {
    public let path: String
    private let fd: Int32

    public enum Failure: Error, CustomStringConvertible {
        case held(path: String, pid: String)
        case system(SystemError)

        public var description: String {
            switch self {
            case .held(let path, let pid):
                return "\(path) is in use by another phosra-gate" + (pid.isEmpty ? "" : " (pid \(pid))")
            case .system(let error): return error.description
            }
        }
    }

    /// Takes `directory/phosra-gate.lock`, creating the directory if needed; never waits.
    public init(directory: String) throws(Failure) {
        do { try Files.makeDirectories(directory, mode: 0o750) } catch { throw .system(error) }
        path = directory + "/phosra-gate.lock"
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard opened >= 0 else { throw .system(SystemError("open", errno: errno, subject: path)) }
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = (try? Files.read(path, limit: 64)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            close(opened)
            if code == EWOULDBLOCK { throw .held(path: directory, pid: holder.trimmingCharacters()) }
            throw .system(SystemError("flock", errno: code, subject: path))
        }
        fd = opened
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// Whether another process holds the lock on `directory` now (for `sync`, `status`).
    public static func isHeld(directory: String) -> Bool {
        let fd = open(directory + "/phosra-gate.lock", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

extension String {
    func trimmingCharacters() -> String {
        String(self.drop { $0 == " " || $0 == "\n" }.reversed().drop { $0 == " " || $0 == "\n" }.reversed())
    }
}
