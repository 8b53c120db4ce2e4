import Glibc
import SystemIO

/// A server program (dnsmasq, unbound) started by a test on loopback, killed (with its
/// process group) and reaped when released, so no test leaves one running, whether it passes, fails or throws.
/// Where util-linux's `setpriv` exists the child also gets PR_SET_PDEATHSIG, so even a
/// crashing test process takes its servers with it.
final class ServerProcess: @unchecked Sendable {
    let pid: pid_t
    let logFile: String
    private var reaped = false

    /// Starts `path arguments…` with stdout and stderr into `logFile`, then waits until
    /// 127.0.0.1:`port` accepts TCP connections (at most 5 s).
    init(_ path: String, _ arguments: [String], logFile: String, readyPort port: UInt16) throws {
        self.logFile = logFile
        let setpriv = "/usr/bin/setpriv"
        let argv = Files.exists(setpriv) ? [setpriv, "--pdeathsig", "KILL", "--", path] + arguments : [path] + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        // A process group of its own, so `stop` also ends what it forks (dnsmasq serves
        // each TCP connection from a child process).
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, argv[0], &actions, &attributes, cArguments, environ)
        guard result == 0 else { throw SystemError("posix_spawn", errno: result, subject: argv[0]) }
        pid = child
        guard waitForPort(port) else {
            stop()
            throw StartError(program: path, log: (try? Files.read(logFile, limit: 1 << 16)).map { String(decoding: $0, as: UTF8.self) } ?? "")
        }
    }

    deinit { stop() }

    /// SIGKILL to the whole process group, and reap: the servers hold no state worth a
    /// graceful exit, and unbound takes a noticeable while to finish one. Idempotent.
    func stop() {
        guard !reaped else { return }
        reaped = true
        // Before reaping: until then the leader's pid, and so the group id, cannot be reused.
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    }

    /// Whether the process has exited (reaping it if so).
    private var exited: Bool {
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            reaped = true
            return true
        }
        return false
    }

    private func waitForPort(_ port: UInt16) -> Bool {
        for _ in 0..<500 {
            if exited { return false }
            if Self.accepts(port) { return true }
            usleep(10_000)
        }
        return false
    }

    /// A blocking connect to 127.0.0.1:port succeeds.
    private static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    struct StartError: Error, CustomStringConvertible {
        let program: String
        let log: String
        var description: String { "\(program) did not start: \(log)" }
    }
}

/// A fresh temporary directory, removed (one level deep) when released.
final class TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        var template = Array("/tmp/pg-upstream-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", errno: errno) }
        path = String(cString: made)
    }

    deinit {
        for name in (try? Files.list(path)) ?? [] { unlink(path + "/" + name) }
        rmdir(path)
    }
}

/// A loopback port free for both TCP and UDP at the moment of asking (a server started
/// right after takes it; the window is small and only other tests could race for it).
func freePort() throws -> UInt16 {
    for _ in 0..<20 {
        let port = try closedPort()
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if bound == 0 { return port }
    }
    throw SystemError("bind", errno: EADDRINUSE, subject: "127.0.0.1 (no free port)")
}
