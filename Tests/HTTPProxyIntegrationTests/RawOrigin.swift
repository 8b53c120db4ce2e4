import Foundation
import TestSupport

/// A TCP listener on 127.0.0.1 that records the bytes of each connection (one at a time);
/// with `replyAfterEOF` it answers `got N bytes` once the client has half-closed, then closes.
final class RawOrigin: @unchecked Sendable {
    // Sendable: `port` and the descriptor are immutable; `bytes` is touched only under `lock`.
    let port: UInt16
    private let fd: Int32
    private let lock = NSLock()
    private var bytes: [UInt8] = []

    /// On `host`:`port` (port 0: any free one).
    init(replyAfterEOF: Bool = false, host: String = "127.0.0.1", port: UInt16 = 0) throws {
        let listener = try TestHTTPServer.listen(port: port, host: host)
        let descriptor = listener.descriptor
        fd = descriptor
        self.port = listener.port
        Thread { [weak self] in
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                self?.serve(connection, replyAfterEOF: replyAfterEOF)
                close(connection)
            }
        }.start()
    }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    private func serve(_ connection: Int32, replyAfterEOF: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var total = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            total += count
            lock.lock()
            bytes += buffer[0..<count]
            lock.unlock()
        }
        guard replyAfterEOF else { return }
        // The reply comes only after the client's half-close has arrived here (the
        // scenario: the proxy must keep the other direction open for it).
        let reply = Array("got \(total) bytes\n".utf8)
        _ = reply.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func received() -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        return bytes
    }

    func waitForBytes(_ count: Int, timeout: TimeInterval = 3) -> [UInt8] {
        _ = waitUntil(timeout: .seconds(timeout)) { received().count >= count }
        return received()
    }
}
