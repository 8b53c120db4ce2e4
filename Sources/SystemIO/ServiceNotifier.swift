import Glibc

/// Tells systemd how the service is doing (sd_notify(3)'s protocol, spoken directly: one
/// datagram of `KEY=value` lines to the `AF_UNIX` socket named by `$NOTIFY_SOCKET`, a path
/// or, starting with `@`, an abstract name). Without `$NOTIFY_SOCKET` (not started by a
/// `Type=notify` unit) there is none. Sending never blocks and never fails the caller:
/// a service manager that went away is not the daemon's problem.
public final class ServiceNotifier: Sendable {
    private let descriptor: Int32
    private let address: [UInt8]
    /// `$WATCHDOG_USEC` in nanoseconds, when systemd expects a `WATCHDOG=1` at least that
    /// often (and `$WATCHDOG_PID`, when set, names this process).
    public let watchdogInterval: UInt64?

    /// The notifier of this process's environment, or nil.
    public static func fromEnvironment() -> ServiceNotifier? {
        guard let path = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !path.isEmpty else { return nil }
        var interval: UInt64?
        if let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let microseconds = UInt64(text),
            microseconds > 0
        {
            let pid = getenv("WATCHDOG_PID").map { String(cString: $0) }
            if pid == nil || pid == String(getpid()) { interval = microseconds * 1000 }
        }
        return ServiceNotifier(path: path, watchdogInterval: interval)
    }

    init?(path: String, watchdogInterval: UInt64?) {
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }  // the abstract namespace
        guard bytes.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else { return nil }
        let made = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard made >= 0 else { return nil }
        descriptor = made
        address = bytes
        self.watchdogInterval = watchdogInterval
    }

    deinit { close(descriptor) }

    /// Sends `lines` (`READY=1`, `STATUS=…`, `WATCHDOG=1`, `STOPPING=1`) as one message.
    public func send(_ lines: [String]) {
        var target = sockaddr_un()
        target.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &target.sun_path) { path in
            for (index, byte) in address.enumerated() { path[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + address.count)
        let message = Array(lines.joined(separator: "\n").utf8)
        _ = message.withUnsafeBytes { bytes in
            withUnsafePointer(to: &target) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
    }
}
