import Foundation

/// A process started by a test (phosra-gate run, dnsmasq, unbound): stderr collected,
/// terminated when the object goes away, so no test leaves a process behind.
public final class ChildDaemon: @unchecked Sendable {
    // Sendable: `process` is started once, in init; `collected` is touched only under `lock`.
    public let process = Process()
    private let errors = Pipe()
    private let lock = NSLock()
    private var collected = Data()

    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], cwd: URL? = nil
    ) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        if let cwd { process.currentDirectoryURL = cwd }
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        errors.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.lock()
            self.collected.append(data)
            self.lock.unlock()
        }
        try process.run()
    }

    deinit { stop() }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// Everything written to stderr so far.
    public var stderr: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: collected, as: UTF8.self)
    }

    /// Waits until stderr contains `text`, the process exits, or `timeout` passes.
    @discardableResult
    public func waitFor(_ text: String, timeout: TimeInterval = 10) -> Bool {
        _ = waitUntil(timeout: .seconds(timeout), interval: 5_000_000) { stderr.contains(text) || !process.isRunning }
        return stderr.contains(text)
    }

    /// Waits for the process to exit (at most `timeout`); its status, or nil if still running.
    public func waitForExit(timeout: TimeInterval = 10) -> Int32? {
        _ = waitUntil(timeout: .seconds(timeout), interval: 5_000_000) { !process.isRunning }
        return process.isRunning ? nil : process.terminationStatus
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
        errors.fileHandleForReading.readabilityHandler = nil
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
