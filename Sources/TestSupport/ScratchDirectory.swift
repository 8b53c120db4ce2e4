import Foundation

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
public enum FreePort {
    public static func tcpAndUDP() -> UInt16 {
        for _ in 0..<50 {
            let tcp = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(tcp, $0, length) }
            }
            guard bound == 0 else {
                close(tcp)
                continue
            }
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(tcp, $0, &length) }
            }
            let port = UInt16(bigEndian: address.sin_port)
            close(tcp)
            // The same number must be free for UDP too.
            let udp = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            let udpBound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(udp, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            close(udp)
            if udpBound == 0 { return port }
        }
        return 0
    }
}
