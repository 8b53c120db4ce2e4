import Foundation
import SystemIO

/// A TCP connection's queues as the kernel shows them (`/proc/net/tcp`): what a
/// test waits on to know the process at the other end has read what it sent, instead of
/// pausing and hoping it has.
public enum TCPQueues {
    /// True when every byte sent on `descriptor` (a connected IPv4 socket of this process,
    /// its peer in the calling thread's network namespace) was acknowledged and read by
    /// the peer's process: nothing unacknowledged on this side, nothing unread on the other.
    public static func peerHasRead(_ descriptor: Int32) -> Bool {
        guard let mine = endpoint(descriptor, peer: false), let theirs = endpoint(descriptor, peer: true),
            let bytes = try? Files.read("/proc/thread-self/net/tcp")
        else { return false }
        // Read as a stream: a /proc file's size is 0, which Foundation's readers trust.
        let table = String(decoding: bytes, as: UTF8.self)
        var sent: Int?
        var unread: Int?
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 4, let local = parse(fields[1]), let remote = parse(fields[2]) else { continue }
            let queues = fields[4].split(separator: ":")
            guard queues.count == 2, let tx = Int(queues[0], radix: 16), let rx = Int(queues[1], radix: 16) else {
                continue
            }
            if local == mine && remote == theirs { sent = tx }
            if local == theirs && remote == mine { unread = rx }
        }
        return sent == 0 && unread == 0
    }

    private struct Endpoint: Equatable {
        let address: UInt32
        let port: UInt16
    }

    /// `0100007F:1F90`: the address as the kernel prints the raw `s_addr`, the port in hex.
    private static func parse(_ field: Substring) -> Endpoint? {
        let parts = field.split(separator: ":")
        guard parts.count == 2, let address = UInt32(parts[0], radix: 16), let port = UInt16(parts[1], radix: 16)
        else { return nil }
        return Endpoint(address: address, port: port)
    }

    private static func endpoint(_ descriptor: Int32, peer: Bool) -> Endpoint? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(descriptor, $0, &length) : getsockname(descriptor, $0, &length)
            }
        }
        guard result == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
        return Endpoint(address: address.sin_addr.s_addr, port: UInt16(bigEndian: address.sin_port))
    }
}
