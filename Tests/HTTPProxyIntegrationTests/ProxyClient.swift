import Foundation

/// A blocking TCP client for what curl cannot do: a head sent slowly or split, a
/// hand-made ClientHello in two writes, half-close, counting open connections.
/// Sendable so that a test can make one inside a network namespace and use it outside:
/// one thread uses it at a time.
final class ProxyClient: @unchecked Sendable {
    // Sendable: only the descriptor, immutable; one test thread uses a client at a time.
    private let fd: Int32

    /// Connects to `host` (IPv4; 127.0.0.1 unless the test made a namespace of its own, and
    /// then from a thread inside it):`port`; reads time out after `timeout` seconds.
    /// `receiveBuffer`: SO_RCVBUF, set before connecting (so the window follows it): how
    /// much the device's own kernel holds for it when it stops reading.
    init(host: String = "127.0.0.1", port: UInt16, timeout: TimeInterval = 5, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw ProxyClientError(message: "connect to \(host):\(port): \(String(cString: strerror(errno)))")
        }
        setTimeout(timeout)
    }

    /// A connection the test made itself (bound to an interface, from a chosen address).
    init(descriptor: Int32, timeout: TimeInterval = 5) {
        fd = descriptor
        setTimeout(timeout)
    }

    deinit { close(fd) }

    var descriptor: Int32 { fd }

    func setTimeout(_ seconds: TimeInterval) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) { send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    /// Bytes that have arrived and wait in this socket's receive queue (FIONREAD).
    func queuedBytes() -> Int {
        var count: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &count) == 0 ? Int(count) : 0
    }

    /// Reads until at least `count` bytes have come (a stream under way).
    /// - Throws: when the stream ends or stalls before, saying after how many bytes.
    func readAtLeast(_ count: Int) throws {
        var received = 0
        while received < count {
            guard let chunk = readSome(), !chunk.isEmpty else {
                throw ProxyClientError(message: "the stream stopped after \(received) bytes")
            }
            received += chunk.count
        }
    }

    /// Waits, at most `seconds`, until the connection is reset or hung up (POLLERR or
    /// POLLHUP: bytes still queued do not count); whether it was.
    func waitForHangup(seconds: Double) -> Bool {
        var entry = pollfd(fd: fd, events: 0, revents: 0)
        return poll(&entry, 1, Int32(seconds * 1000)) > 0 && entry.revents & Int16(POLLERR | POLLHUP) != 0
    }

    /// Half-close: no more bytes from us.
    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// One read: its bytes, [] at EOF, nil on timeout or error.
    func readSome() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 { return nil }
        return Array(buffer[0..<count])
    }

    /// Reads until `text` has arrived, EOF or a timeout; everything read.
    func read(until text: String) -> String {
        var received: [UInt8] = []
        while !String(decoding: received, as: UTF8.self).contains(text) {
            guard let chunk = readSome(), !chunk.isEmpty else { break }
            received += chunk
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Reads one response head (to the empty line), plus `body` bytes after it.
    func readResponse() -> String {
        var text = read(until: "\r\n\r\n")
        if let range = text.range(of: "\r\n\r\n"),
            let line = text[..<range.lowerBound].split(separator: "\r\n").first(where: {
                $0.lowercased().hasPrefix("content-length:")
            }),
            let length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
        {
            while text.utf8.count - text.distance(from: text.startIndex, to: range.upperBound) < length {
                guard let chunk = readSome(), !chunk.isEmpty else { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
        }
        return text
    }

    /// Everything until the proxy closes (or `timeout` passes: then nil).
    func readToEnd() -> [UInt8]? {
        var received: [UInt8] = []
        while true {
            guard let chunk = readSome() else { return nil }
            if chunk.isEmpty { return received }
            received += chunk
        }
    }

    /// Everything until the proxy closes or resets the connection (a close with bytes of
    /// ours unread is a reset); nil when it did neither within the read timeout.
    func readUntilClosedOrReset() -> [UInt8]? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return received }
            if count < 0 { return errno == ECONNRESET ? received : nil }
            received += buffer[0..<count]
        }
    }

    /// Seconds until the proxy closed or reset the connection (nil: neither within the
    /// read timeout).
    func secondsUntilClosed() -> TimeInterval? {
        let (closed, seconds) = timed { readUntilClosedOrReset() != nil }
        return closed ? seconds : nil
    }
}

struct ProxyClientError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
