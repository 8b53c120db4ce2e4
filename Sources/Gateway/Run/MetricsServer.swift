import EventLoop
import Glibc
import HTTP1
import SystemIO

/// `GET /metrics` on `metrics_listen` (docs/operations.md#metrics): one thread of its own,
/// blocking, one scrape at a time — scrapes are rare, and nothing here touches a loop
/// thread. A request head must arrive within 2 s and fit in 8 KiB; anything but
/// `GET /metrics` gets 404 (405 for another method).
package final class MetricsServer: @unchecked Sendable {
    // Sendable: `listener` is set once before the thread starts; `stopping` is atomic.
    private let listener: Socket
    private let page: @Sendable () -> String
    private var thread: SystemThread?
    let address: SocketAddress

    init(address: SocketAddress, page: @escaping @Sendable () -> String) throws(SystemError) {
        listener = try Socket.listen(on: address, backlog: 16)
        // This thread blocks in accept(2): the loops' sockets are non-blocking, this one not.
        let flags = fcntl(listener.descriptor, F_GETFL)
        _ = fcntl(listener.descriptor, F_SETFL, flags & ~O_NONBLOCK)
        self.address = listener.address ?? address
        self.page = page
    }

    func start() throws(SystemError) {
        thread = try SystemThread.spawn(name: "pg-metrics", priority: .background) { [self] in serve() }
    }

    private func serve() {
        while true {
            let accepted = accept(listener.descriptor, nil, nil)
            if accepted < 0 {
                if errno == EINTR { continue }
                return  // closed at shutdown
            }
            answer(accepted)
            close(accepted)
        }
    }

    private func answer(_ connection: Int32) {
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        var scanner = HeadScanner(limit: 8192)
        var length: Int?
        while length == nil {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            head += buffer[0..<count]
            do { length = try head.withUnsafeBytes { bytes throws(HTTP1Error) in try scanner.scan(bytes) } } catch {
                return respond(connection, 431, "text/plain", "request header too large\n")
            }
        }
        guard let request = try? RequestHead(Array(head[0..<(length ?? 0)])) else {
            return respond(connection, 400, "text/plain", "bad request\n")
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            return respond(connection, 405, "text/plain", "only GET\n")
        }
        guard request.target == "/metrics" || request.target.hasPrefix("/metrics?") else {
            return respond(connection, 404, "text/plain", "see /metrics\n")
        }
        respond(connection, 200, "text/plain; version=0.0.4; charset=utf-8", page(), headOnly: request.method == "HEAD")
    }

    private func respond(_ connection: Int32, _ status: Int, _ type: String, _ body: String, headOnly: Bool = false) {
        let reason = [200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"][status] ?? "Error"
        let bytes = Array(body.utf8)
        var message = Array(
            "HTTP/1.1 \(status) \(reason)\r\nContent-Type: \(type)\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n"
                .utf8)
        if !headOnly { message += bytes }
        var offset = 0
        while offset < message.count {
            let sent = message[offset...].withUnsafeBytes {
                send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// Stops accepting; the thread ends.
    func stop() {
        shutdown(listener.descriptor, Int32(SHUT_RDWR))
        listener.close()
        thread?.join()
        thread = nil
    }
}
