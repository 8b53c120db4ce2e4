import Foundation
import TestSupport

/// An origin (on 127.0.0.1 unless told) that, for each connection, reads the first bytes (a request
/// head, or anything through a tunnel) and then sends without end: an HTTP response head
/// with a length far beyond what a test reads when `httpHead`, then a pattern, as fast as
/// the connection takes it up to about 30 MB/s, until the peer is gone or `limit` has
/// passed.
final class StreamingOrigin: @unchecked Sendable {
    // Sendable: `port` and the descriptor are immutable; `ended` is touched only under `lock`.
    let port: UInt16
    private let fd: Int32
    private let lock = NSLock()
    private var ended = 0

    /// On `host` (IPv4), any free port unless `port` is given.
    init(httpHead: Bool, host: String = "127.0.0.1", port: UInt16 = 0, limit: TimeInterval = 120) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = port.bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw ProxyClientError(message: "streaming origin: cannot listen: errno \(errno)")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        fd = descriptor
        self.port = UInt16(bigEndian: address.sin_port)
        Thread { [weak self] in
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                let origin = self
                Thread { origin?.serve(connection, httpHead: httpHead, limit: limit) }.start()
            }
        }.start()
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    private func serve(_ connection: Int32, httpHead: Bool, limit: TimeInterval) {
        defer { close(connection) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        guard (buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }) > 0 else { return }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if httpHead {
            let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\n".utf8)
            guard (head.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) > 0
            else { return }
        }
        for index in buffer.indices { buffer[index] = UInt8(ascii: "a") &+ UInt8(index % 26) }
        let end = Date().addingTimeInterval(limit)
        while Date() < end {
            let sent = buffer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
            guard sent > 0 else { break }
            // About 30 MB/s: fills a stalled device's buffers in a fraction of a second
            // without taking a core from the gateway under test.
            usleep(2_000)
        }
        lock.lock()
        ended += 1
        lock.unlock()
    }

    /// How many connections have ended (the peer went away or the limit passed).
    var endedConnections: Int {
        lock.lock()
        defer { lock.unlock() }
        return ended
    }
}
