import Foundation

/// Plain sockets for what dig cannot do: garbage packets, pipelined TCP.
enum RawSockets {
    static func udpSend(_ packets: [[UInt8]], port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port)
        for packet in packets {
            _ = packet.withUnsafeBytes { bytes in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
        }
    }

    /// Sends each query and waits up to a second for its answer, one after the other: the
    /// answers' rcodes, nil where none came.
    static func udpRcodes(_ queries: [[UInt8]], port: UInt16) -> [Int?] {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return queries.map { _ in nil } }
        var timeoutValue = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeoutValue, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        return queries.map { query in
            _ = query.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return count >= 4 ? Int(buffer[3] & 0x0F) : nil
        }
    }

    /// Sends `queries` back to back on one TCP connection and reads as many answers.
    static func tcpPipeline(_ queries: [[UInt8]], port: UInt16, timeout: TimeInterval = 5) -> [[UInt8]] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return [] }
        var timeoutValue = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeoutValue, socklen_t(MemoryLayout<timeval>.size))
        var stream: [UInt8] = []
        for query in queries { stream += [UInt8(query.count >> 8), UInt8(query.count & 0xFF)] + query }
        _ = stream.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var received: [UInt8] = []
        var answers: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while answers.count < queries.count {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[0..<count]
            while received.count >= 2 {
                let length = Int(received[0]) << 8 | Int(received[1])
                guard received.count >= 2 + length else { break }
                answers.append(Array(received[2..<(2 + length)]))
                received.removeFirst(2 + length)
            }
        }
        return answers
    }

    private static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        return address
    }

    /// A query for `name` (type A), with this ID.
    static func query(_ name: String, id: UInt16) -> [UInt8] {
        var packet: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.split(separator: ".") { packet += [UInt8(label.utf8.count)] + Array(label.utf8) }
        return packet + [0, 0, 1, 0, 1]
    }
}
