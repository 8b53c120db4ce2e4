import Foundation
import Glibc

/// A hostile device's TCP connections, for the limits' tests: opened from one source
/// address (any 127.0.0.0/8 address is this host's own, so one test can be thirty
/// devices), kept open, fed one byte at a time of a message that never completes soon.
/// Connections the other side closed are noticed and dropped by `prune()`; `topUp`
/// opens new ones to replace them.
public final class HostileConnections {
    public let source: String
    let port: UInt16
    let message: [UInt8]
    /// Open descriptors and how many bytes of `message` each has sent.
    private var open: [(descriptor: Int32, sent: Int)] = []
    /// Connections the gateway closed, over the life of this object.
    public private(set) var closedByPeer = 0

    public init(source: String, port: UInt16, message: [UInt8]) {
        self.source = source
        self.port = port
        self.message = message
    }

    deinit { closeAll() }

    public var count: Int { open.count }

    /// Opens connections until `target` are open (each non-blocking, connected at once on
    /// loopback); returns how many it opened.
    @discardableResult
    public func topUp(to target: Int) -> Int {
        prune()
        var opened = 0
        while open.count < target, let descriptor = connect() {
            open.append((descriptor, 0))
            opened += 1
        }
        return opened
    }

    /// One more byte on every connection (from the start of `message` again when done).
    public func trickle() {
        for index in open.indices {
            var byte = message[open[index].sent % message.count]
            _ = send(open[index].descriptor, &byte, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            open[index].sent += 1
        }
    }

    /// Drops the connections the other side closed (EOF or reset), reading and discarding
    /// whatever it answered.
    public func prune() {
        var kept: [(descriptor: Int32, sent: Int)] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        for entry in open {
            let got = recv(entry.descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                Glibc.close(entry.descriptor)
                closedByPeer += 1
            } else {
                kept.append(entry)
            }
        }
        open = kept
    }

    /// Waits until the gateway answers or closes any connection of `groups`, at most
    /// `milliseconds`: the pace of a device that trickles a byte a second and reacts at once
    /// to a connection shed. True when one did.
    @discardableResult
    public static func waitForPeer(_ groups: [HostileConnections], milliseconds: Int32) -> Bool {
        var entries = groups.flatMap { group in
            group.open.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
        }
        guard !entries.isEmpty else { return false }
        return poll(&entries, nfds_t(entries.count), milliseconds) > 0
    }

    public func closeAll() {
        for entry in open { Glibc.close(entry.descriptor) }
        open.removeAll()
    }

    private func connect() -> Int32? {
        LoopbackSocketFactory.connect(tcp: true, from: source, to: port, timeout: 1)
    }

    /// Raises this process's open-file limit to its hard limit (a test that holds
    /// thousands of connections).
    public static func raiseOpenFileLimit() {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(resource, &limit)
    }
}

/// What `/proc` says of a process: open descriptors and resident memory.
public enum ProcessSample {
    public static func openFiles(_ pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }
}

/// A socket from one loopback address (each of 127.0.0.0/8 is this host's own, so each
/// source is another device to the gateway) to 127.0.0.1:port, with send and receive
/// timeouts so no load loop can hang (connect honours the send timeout).
public enum LoopbackSocketFactory {
    /// The connected descriptor (the caller closes it), or nil.
    public static func connect(tcp: Bool, from source: String, to port: UInt16, timeout: Double) -> Int32? {
        let kind = tcp ? Int32(SOCK_STREAM.rawValue) : Int32(SOCK_DGRAM.rawValue)
        let descriptor = socket(AF_INET, kind | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, length) }
        }
        guard bound == 0, connected == 0 else {
            Glibc.close(descriptor)
            return nil
        }
        return descriptor
    }
}
