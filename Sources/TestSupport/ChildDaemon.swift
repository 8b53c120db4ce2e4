import Foundation

/// A process started by a test (phosra-gate run, dnsmasq, unbound): stderr collected,
/// terminated when the object goes away, so no test leaves a process behind.
public final class ChildDaemon: @unchecked Sendable {
    // Sendable: `process` is started once, in init; `stderrText` is behind its lock.
    public let process = Process()
    private let stderrText = StderrText()

    /// What the process wrote to stderr, read by a thread of its own to the end.
    private final class StderrText: @unchecked Sendable {
        // Sendable: `bytes` and `ended` are touched only under `lock`.
        private let lock = NSLock()
        private var bytes = Data()
        private var ended = false

        func append(_ data: Data) { lock.withLock { bytes.append(data) } }
        func end() { lock.withLock { ended = true } }
        var text: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }
        /// The pipe's end was read: every byte written is in `text`.
        var isComplete: Bool { lock.withLock { ended } }
    }

    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], cwd: URL? = nil
    ) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let cwd { process.currentDirectoryURL = cwd }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        // `run` closes this process's copy of the write end: the pipe ends with the child's.
        try process.run()
        let reading = errors.fileHandleForReading
        let text = stderrText
        Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(reading.fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                text.append(Data(buffer[..<count]))
            }
            text.end()
        }.start()
    }

    deinit { stop() }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// Everything written to stderr so far.
    public var stderr: String { stderrText.text }

    /// Waits until stderr contains `text`, the process exits (and its stderr is read to
    /// the end), or `timeout` passes.
    @discardableResult
    public func waitFor(_ text: String, timeout: TimeInterval = 10) -> Bool {
        _ = waitUntil(timeout: .seconds(timeout), interval: 5_000_000) { stderr.contains(text) || !process.isRunning }
        if !process.isRunning { readToTheEnd() }
        return stderr.contains(text)
    }

    /// Waits for the process to exit (at most `timeout`); its status, or nil if still running.
    /// Once it has exited, `stderr` has all it wrote (read to its end, for at most 2 s more:
    /// a process it started may still hold the pipe).
    public func waitForExit(timeout: TimeInterval = 10) -> Int32? {
        _ = waitUntil(timeout: .seconds(timeout), interval: 5_000_000) { !process.isRunning }
        guard !process.isRunning else { return nil }
        readToTheEnd()
        return process.terminationStatus
    }

    /// Once the process has exited: until its stderr is read to the end (2 s at most, for a
    /// process it started that still holds the pipe).
    private func readToTheEnd() {
        _ = waitUntil(timeout: .seconds(2), interval: 1_000_000) { stderrText.isComplete }
    }

    public func signal(_ number: Int32) { if process.isRunning { kill(pid, number) } }

    /// SIGTERM, then SIGKILL if it has not exited within 5 s.
    public func stop() {
        guard process.isRunning else { return }
        kill(pid, SIGTERM)
        if waitForExit(timeout: 5) == nil {
            kill(pid, SIGKILL)
            _ = waitForExit(timeout: 2)
        }
    }

    /// Resident memory in bytes, from /proc.
    public var residentBytes: Int { statusBytes("VmRSS") }

    /// The peak of resident memory so far (VmHWM), in bytes: what a transient allocation
    /// between two samples leaves behind.
    public var peakResidentBytes: Int { statusBytes("VmHWM") }

    private func statusBytes(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return (Int(line.filter(\.isNumber)) ?? 0) * 1024
        }
        return 0
    }
}
