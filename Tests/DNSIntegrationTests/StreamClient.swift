import Foundation

/// One TCP connection to the gateway's DNS port, for what dig cannot do: raw bytes, a
/// frame at a time, and noticing when the gateway closes.
final class StreamClient {
    private let descriptor: Int32
    private var received: [UInt8] = []

    init(port: UInt16) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw StreamClientError(message: "connect: \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads what arrives until the gateway closes (EOF or reset): everything read, or nil
    /// when the connection is still open after `timeout` seconds.
    func readUntilClosed(timeout: TimeInterval) -> [UInt8]? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard wait(until: deadline) else { return nil }
            guard let more = readOnce() else { return received }
            received += more
        }
        return nil
    }

    /// The next length-prefixed message, or nil when none came whole within `timeout`.
    func readFrame(timeout: TimeInterval) -> [UInt8]? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if received.count >= 2 {
                let length = Int(received[0]) << 8 | Int(received[1])
                if received.count >= 2 + length {
                    let frame = Array(received[2..<(2 + length)])
                    received.removeFirst(2 + length)
                    return frame
                }
            }
            guard Date() < deadline, wait(until: deadline), let more = readOnce() else { return nil }
            received += more
        }
    }

    /// Whether input (or EOF) is waiting before `deadline`.
    private func wait(until deadline: Date) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
        return poll(&entry, 1, milliseconds) > 0
    }

    /// One read: nil at EOF or an error.
    private func readOnce() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count > 0 ? Array(buffer[0..<count]) : nil
    }
}

struct StreamClientError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
