import CSystem
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A server program (dnsmasq, unbound) started by a test on loopback: stdout and stderr
/// into a log file, in a process group of its own (dnsmasq serves each TCP connection
/// from a forked child), SIGKILLed with its whole group and reaped when released or
/// `kill()`ed — so no test leaves one behind, whether it passes, fails or throws. Where
/// util-linux's `setpriv` exists the child also gets PR_SET_PDEATHSIG, so even a crashing
/// test process takes its servers with it.
public final class SpawnedServer: @unchecked Sendable {
    // Sendable: `pid` and `logFile` are immutable; the rest is touched only under `lock`.
    public let pid: pid_t
    public let logFile: String
    private let lock = NSLock()
    private var reaped = false

    /// Starts `path arguments…` and waits until 127.0.0.1:`readyPort` accepts TCP
    /// connections (at most `timeout`); throws with the log if it exits or never does.
    public convenience init(
        _ path: String, _ arguments: [String], logFile: String, readyPort: UInt16,
        timeout: TimeInterval = 10
    ) throws {
        try self.init(path, arguments, logFile: logFile, timeout: timeout, what: "start on 127.0.0.1:\(readyPort)") {
            _ in SpawnedServer.acceptsTCP(readyPort)
        }
    }

    /// Starts `path arguments…` and waits until its log contains `text` (at most
    /// `timeout`): for a server whose port the test cannot reach from here (one started
    /// inside a network namespace).
    public convenience init(
        _ path: String, _ arguments: [String], logFile: String, readyWhenLogContains text: String,
        timeout: TimeInterval = 20
    ) throws {
        try self.init(path, arguments, logFile: logFile, timeout: timeout, what: "log \"\(text)\"") { log in
            log.contains(text)
        }
    }

    private init(
        _ path: String, _ arguments: [String], logFile: String, timeout: TimeInterval, what: String,
        ready: (String) -> Bool
    ) throws {
        self.logFile = logFile
        pid = try Self.spawn([path] + arguments, logFile: logFile, deathSignal: true)
        let started = waitUntil(timeout: .seconds(timeout), interval: 5_000_000) { ready(log) || hasExited }
        if !started || hasExited {
            kill()
            throw SpawnedServerError(message: "\(path) did not \(what):\n\(log)")
        }
    }

    /// Runs `argv` to completion, its output (stdout and stderr) into `logFile`; the exit
    /// status and the output. Waited for here, with waitpid, whatever else the test runs.
    public static func run(_ argv: [String], logFile: String) throws -> (status: Int32, output: String) {
        let child = try spawn(argv, logFile: logFile, deathSignal: false)
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0, errno == EINTR {}
        let output = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        return (status, output)
    }

    /// posix_spawn in a process group of its own, with default signal dispositions and an
    /// empty mask, stdin from /dev/null, stdout and stderr into `logFile`, no other
    /// descriptor.
    private static func spawn(_ command: [String], logFile: String, deathSignal: Bool) throws -> pid_t {
        let setpriv = "/usr/bin/setpriv"
        let argv =
            deathSignal && FileManager.default.isExecutableFile(atPath: setpriv)
            ? [setpriv, "--pdeathsig", "KILL", "--"] + command : command
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logFile, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of the test process: a pipe another thread opened for its own child
        // (Foundation's Process opens them inheritable) held open by a long-lived server
        // would keep that child's reader waiting for the server to end.
        cs_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, argv[0], &actions, &attributes, cArguments, environ)
        guard result == 0 else {
            throw SpawnedServerError(
                message: "\(command[0]) could not be started: \(String(cString: strerror(result)))")
        }
        return child
    }

    /// Sends `number` to the server (its process, not its group).
    public func signal(_ number: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if !reaped { Glibc.kill(pid, number) }
    }

    deinit { kill() }

    /// Everything the server wrote so far.
    public var log: String {
        (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
    }

    /// Whether it is still running (reaping it if it has exited).
    public var isRunning: Bool { !hasExited }

    /// SIGKILL to the whole process group, then reap. Idempotent.
    public func kill() {
        lock.lock()
        defer { lock.unlock() }
        guard !reaped else { return }
        reaped = true
        // Before reaping: until then the leader's pid, and so the group id, cannot be reused.
        Glibc.kill(-pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    }

    private var hasExited: Bool {
        lock.lock()
        defer { lock.unlock() }
        if reaped { return true }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            // The leader is gone; its forked children (same group) may not be.
            Glibc.kill(-pid, SIGKILL)
            reaped = true
            return true
        }
        return false
    }

    /// A blocking connect to 127.0.0.1:`port` succeeds.
    static func acceptsTCP(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in.loopback(port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

extension SpawnedServer {
    /// A server started by `start` on a loopback port free for TCP and UDP, and that port.
    /// Another process can take the port between asking and binding, so up to three
    /// ports are tried; the last failure is thrown.
    public static func onFreePort(_ start: (UInt16) throws -> SpawnedServer) throws -> (SpawnedServer, UInt16) {
        var lastError: Error?
        for _ in 0..<3 {
            let port = FreePort.tcpAndUDP()
            do { return (try start(port), port) } catch { lastError = error }
        }
        throw lastError!
    }
}

public struct SpawnedServerError: Error, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

extension sockaddr_in {
    /// 127.0.0.1:`port`.
    static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
