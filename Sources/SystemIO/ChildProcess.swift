import Glibc

/// Runs a program to completion and collects its standard output (standard error is
/// inherited). Used by commands that measure in a fresh process, never on an event loop.
public enum ChildProcess {
    public struct Result: Sendable {
        public let status: Int32
        public let output: [UInt8]
        public var text: String { String(decoding: output, as: UTF8.self) }
    }

    public static func run(_ path: String, _ arguments: [String]) throws(SystemError) -> Result {
        var pipeFDs: [Int32] = [0, 0]
        _ = try systemCall("pipe") { pipe(&pipeFDs) }
        // Close-on-exec, so the child keeps only the copy made on its stdout.
        for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(pipeFDs[1])
        guard spawned == 0 else {
            close(pipeFDs[0])
            throw SystemError("posix_spawn", errno: spawned, subject: path)
        }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(pipeFDs[0], $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            output.append(contentsOf: chunk[0..<count])
        }
        close(pipeFDs[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let exitCode = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Result(status: exitCode, output: output)
    }
}

extension ChildProcess {
    /// Runs a program that reads `input` on its standard input and reports on its output
    /// (`nft -f -`): stdout and stderr come back together in `output`, in the order they
    /// were written. Input and output are served together with poll(2), so a child that
    /// answers before it has read everything cannot stall on a full pipe. The caller
    /// ignores SIGPIPE (`Signals.ignoreBrokenPipe()`), or a child that exits before reading
    /// all of its input ends the caller too.
    public static func run(_ path: String, _ arguments: [String], input: [UInt8]) throws(SystemError) -> Result {
        var inputFDs: [Int32] = [0, 0]
        var outputFDs: [Int32] = [0, 0]
        _ = try systemCall("pipe") { pipe(&inputFDs) }
        do { _ = try systemCall("pipe") { pipe(&outputFDs) } } catch {
            for fd in inputFDs { close(fd) }
            throw error
        }
        for fd in inputFDs + outputFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputFDs[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outputFDs[1], 1)
        posix_spawn_file_actions_adddup2(&actions, outputFDs[1], 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(inputFDs[0])
        close(outputFDs[1])
        guard spawned == 0 else {
            close(inputFDs[1])
            close(outputFDs[0])
            throw SystemError("posix_spawn", errno: spawned, subject: path)
        }
        _ = fcntl(inputFDs[1], F_SETFL, fcntl(inputFDs[1], F_GETFL) | O_NONBLOCK)
        var writer: Int32 = inputFDs[1]
        var pending = input[...]
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var reading = true
        while reading {
            if writer >= 0, pending.isEmpty {
                close(writer)
                writer = -1
            }
            var fds = [pollfd(fd: outputFDs[0], events: Int16(POLLIN), revents: 0)]
            if writer >= 0 { fds.append(pollfd(fd: writer, events: Int16(POLLOUT), revents: 0)) }
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            if writer >= 0, fds[1].revents != 0 {
                let written = pending.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
                if written > 0 {
                    pending = pending.dropFirst(written)
                } else if written < 0, errno != EAGAIN, errno != EINTR {
                    // The child closed its input (EPIPE): what it says is in its output.
                    pending = pending[pending.endIndex...]
                }
            }
            if fds[0].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { read(outputFDs[0], $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { reading = false } else { output.append(contentsOf: chunk[0..<count]) }
            }
        }
        if writer >= 0 { close(writer) }
        close(outputFDs[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let exitCode = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Result(status: exitCode, output: output)
    }
}

/// This process's memory, from `/proc/self/status`.
public enum ProcessMemory {
    /// Resident set size now, in bytes.
    public static func resident() -> Int { field("VmRSS:") }
    /// Peak resident set size so far, in bytes.
    public static func peakResident() -> Int { field("VmHWM:") }

    private static func field(_ name: String) -> Int {
        guard let bytes = try? Files.read("/proc/self/status", limit: 1 << 16) else { return 0 }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.dropFirst(name.count).filter { $0.isNumber }
            return (Int(String(digits)) ?? 0) * 1024
        }
        return 0
    }
}
