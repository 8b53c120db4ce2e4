import Foundation
import Locks

/// A scratch directory removed when the last reference goes.
public final class ScratchDirectory: @unchecked Sendable {
    // Sendable: `url` is immutable; the directory is removed in deinit, once.
    public let url: URL
    public var path: String { url.path }

    public init(_ label: String = "phosra-gate-test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes `text` at `relative` (parents created) and returns the full path.
    @discardableResult
    public func write(_ relative: String, _ text: String) throws -> String {
        let file = url.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    public func path(_ relative: String) -> String { url.appendingPathComponent(relative).path }
}

/// Free loopback ports, found by binding port 0 and closing again (the OS picks).
/// Ports for test servers and daemons, free for TCP and UDP on 127.0.0.1 when handed out.
/// Taken in turn from 20000–32767, below Linux's ephemeral range (32768–60999), from a
/// random start, and never twice in one test process: a port the kernel picked for `bind`
/// to port 0 could be handed to the next such `bind`, or to the source port of a dig or
/// curl, in the moment before the daemon that was told it binds it, and with tests
/// running side by side that moment is often taken.
public enum FreePort {
    private static let range: Range<Int> = 20_000..<32_768
    private static let next = Lock<Int>(Int.random(in: 0..<(32_768 - 20_000)))

    public static func tcpAndUDP() -> UInt16 {
        for _ in 0..<range.count {
            let port = UInt16(
                next.withLock { offset in
                    defer { offset = (offset + 1) % range.count }
                    return range.lowerBound + offset
                })
            if bindable(port, type: Int32(SOCK_STREAM.rawValue)), bindable(port, type: Int32(SOCK_DGRAM.rawValue)) {
                return port
            }
        }
        return 0
    }

    /// Whether a socket that shares its port with no one could bind 127.0.0.1:`port` over
    /// UDP now: false while a daemon's (shared) socket still holds it.
    public static func isFree(udp port: UInt16) -> Bool { bindable(port, type: Int32(SOCK_DGRAM.rawValue)) }

    private static func bindable(_ port: UInt16, type: Int32) -> Bool {
        let descriptor = socket(AF_INET, type, 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        } == 0
    }
}
