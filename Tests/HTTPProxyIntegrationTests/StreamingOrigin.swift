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
        let listener = try TestHTTPServer.listen(port: port, host: host)
        let descriptor = listener.descriptor
        fd = descriptor
        self.port = listener.port
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
            pause(2_000_000)
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
