import Foundation

/// Plain sockets for the firewall test: listeners that stand for servers on the internet,
/// and connection attempts whose outcome — connected, refused at once, or nothing within
/// the bound — is what the firewall decides. Made inside a namespace
/// (`NetworkNamespaces.inside`), they stay there.
enum FirewallProbes {
    enum Outcome: Equatable {
        case connected
        /// TCP reset, or ICMP port unreachable for UDP: refused at once.
        case refused
        case timedOut
        case failed(Int32)
    }

    /// `text` and `port` as a socket address (IPv4 or IPv6).
    static func address(_ text: String, _ port: UInt16) -> (storage: sockaddr_storage, length: socklen_t) {
        var storage = sockaddr_storage()
        if text.contains(":") {
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            _ = inet_pton(AF_INET6, text, &v6.sin6_addr)
            withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: v6) { target.copyMemory(from: $0) } }
            return (storage, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
        var v4 = sockaddr_in()
        v4.sin_family = sa_family_t(AF_INET)
        v4.sin_port = port.bigEndian
        _ = inet_pton(AF_INET, text, &v4.sin_addr)
        withUnsafeMutableBytes(of: &storage) { target in withUnsafeBytes(of: v4) { target.copyMemory(from: $0) } }
        return (storage, socklen_t(MemoryLayout<sockaddr_in>.size))
    }

    /// A bound socket (`SOCK_STREAM` listening, or `SOCK_DGRAM`) on `text`:`port`.
    static func listener(_ type: Int32, _ text: String, _ port: UInt16) throws -> Int32 {
        var (storage, length) = address(text, port)
        let fd = socket(Int32(storage.ss_family), type | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, type != Int32(SOCK_STREAM.rawValue) || listen(fd, 16) == 0 else {
            let error = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: error) ?? .EIO)
        }
        return fd
    }

    /// A TCP connection attempt to `text`:`port`, given `milliseconds`.
    static func tcp(_ text: String, _ port: UInt16, milliseconds: Int32 = 3000) -> Outcome {
        attempt(Int32(SOCK_STREAM.rawValue), text, port, milliseconds: milliseconds)
    }

    /// A datagram to `text`:`port` on a connected UDP socket, then `milliseconds` for an
    /// answer: an ICMP port unreachable comes back as ECONNREFUSED.
    static func udp(_ text: String, _ port: UInt16, milliseconds: Int32 = 3000) -> Outcome {
        attempt(Int32(SOCK_DGRAM.rawValue), text, port, milliseconds: milliseconds)
    }

    private static func attempt(_ type: Int32, _ text: String, _ port: UInt16, milliseconds: Int32) -> Outcome {
        var (storage, length) = address(text, port)
        let fd = socket(Int32(storage.ss_family), type | Int32(SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return .failed(errno) }
        defer { close(fd) }
        let connected = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        if connected != 0, errno != EINPROGRESS { return errno == ECONNREFUSED ? .refused : .failed(errno) }
        var events = Int16(POLLOUT)
        if type == Int32(SOCK_DGRAM.rawValue) {
            let payload = Array("phosra-gate firewall probe".utf8)
            guard send(fd, payload, payload.count, Int32(MSG_NOSIGNAL)) == payload.count else { return .failed(errno) }
            events = Int16(POLLIN)
        }
        var entry = pollfd(fd: fd, events: events, revents: 0)
        var ready: Int32
        repeat { ready = poll(&entry, 1, milliseconds) } while ready < 0 && errno == EINTR
        guard ready > 0 else { return .timedOut }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
        switch error {
        case 0: return .connected
        case ECONNREFUSED: return .refused
        default: return .failed(error)
        }
    }

    /// Whether a datagram arrives on `fd` within `milliseconds` (it is read and dropped).
    /// Whether a connection has reached the listening TCP socket `fd` (it waits in the
    /// accept queue).
    static func connected(_ fd: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }

    static func received(_ fd: Int32, milliseconds: Int32 = 3000) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var ready: Int32
        repeat { ready = poll(&entry, 1, milliseconds) } while ready < 0 && errno == EINTR
        guard ready > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 2048)
        return recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0
    }
}
