import Foundation
import Locks
import TestSupport

/// An origin on 127.0.0.1 that fills every connection it is given: once a connection has
/// sent its first bytes (a request head, or anything through a tunnel), it is written to
/// whenever the kernel takes more, an HTTP response head first when `httpHead`, until the
/// peer is gone. One thread polls every connection, so hundreds cost one thread; it ends
/// with `stop()` or after `limit` seconds. Counts what it has sent, for the test to say
/// where the bytes went.
final class FloodOrigin: @unchecked Sendable {
    // Sendable: `port` and `listener` are immutable; the counters are behind `state`.
    let port: UInt16
    private let listener: Int32
    private let state = Lock(State())

    private struct State {
        var sent = 0
        var accepted = 0
        var stopped = false
    }

    private struct Connection {
        let fd: Int32
        var sending = false
        var head: [UInt8]
    }

    init(httpHead: Bool, limit: TimeInterval = 120) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 1024) == 0 else {
            close(descriptor)
            throw ProxyClientError(message: "flood origin: cannot listen: errno \(errno)")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        listener = descriptor
        port = UInt16(bigEndian: address.sin_port)
        let head = httpHead ? Array("HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\n".utf8) : []
        let end = Date().addingTimeInterval(limit)
        Thread { [self] in run(head: head, until: end) }.start()
    }

    deinit { stop() }

    /// Bytes written to all connections so far.
    var sent: Int { state.withLock { $0.sent } }
    var accepted: Int { state.withLock { $0.accepted } }

    /// Closes the listener and every connection (the thread does, within 100 ms).
    func stop() { state.withLock { $0.stopped = true } }

    private func run(head: [UInt8], until end: Date) {
        var connections: [Connection] = []
        let chunk = [UInt8](repeating: 0x61, count: 65_536)
        var scratch = [UInt8](repeating: 0, count: 65_536)
        defer {
            for connection in connections { close(connection.fd) }
            close(listener)
        }
        while Date() < end, !state.withLock({ $0.stopped }) {
            var polled = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            for connection in connections {
                polled.append(
                    pollfd(fd: connection.fd, events: Int16(connection.sending ? POLLOUT : POLLIN), revents: 0))
            }
            guard poll(&polled, nfds_t(polled.count), 100) > 0 else { continue }
            if polled[0].revents != 0 {
                while true {
                    let accepted = accept(listener, nil, nil)
                    guard accepted >= 0 else { break }
                    _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK)
                    connections.append(Connection(fd: accepted, head: head))
                    state.withLock { $0.accepted += 1 }
                }
            }
            var gone: Set<Int32> = []
            var sentNow = 0
            // Connections accepted in this round were not polled yet.
            for index in 0..<(polled.count - 1) where polled[index + 1].revents != 0 {
                let fd = connections[index].fd
                if !connections[index].sending {
                    let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if count > 0 { connections[index].sending = true } else if count == 0 { gone.insert(fd) }
                    continue
                }
                while true {
                    let bytes = connections[index].head.isEmpty ? chunk : connections[index].head
                    let count = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if count < 0 {
                        if errno != EAGAIN { gone.insert(fd) }
                        break
                    }
                    sentNow += count
                    if !connections[index].head.isEmpty { connections[index].head.removeFirst(count) }
                }
            }
            if sentNow > 0 { state.withLock { $0.sent += sentNow } }
            if !gone.isEmpty {
                for fd in gone { close(fd) }
                connections.removeAll { gone.contains($0.fd) }
            }
        }
    }
}

/// What the kernel holds for TCP sockets on loopback, per `ss -tnm`: the queues in bytes
/// and the memory charged for them (`skmem` r: receive, w: send, truesize).
struct SocketMemory {
    var sockets = 0
    var receiveQueue = 0
    var sendQueue = 0
    /// Memory charged for received and queued-to-send bytes (r + w), in bytes.
    var charged = 0

    /// The established sockets `filter` selects (an `ss` filter such as `sport = :3128`).
    static func sample(_ filter: String) throws -> SocketMemory {
        let output = try Program.run("/usr/bin/ss", ["-tnmH", "state", "established", "( \(filter) )"])
        var memory = SocketMemory()
        for line in output.stdout.split(separator: "\n") {
            let text = String(line).trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("skmem:(") {
                for field in text.dropFirst(7).dropLast().split(separator: ",") {
                    if field.hasPrefix("r"), !field.hasPrefix("rb"), let value = Int(field.dropFirst()) {
                        memory.charged += value
                    }
                    if field.hasPrefix("w"), let value = Int(field.dropFirst()) { memory.charged += value }
                }
            } else {
                let words = text.split(separator: " ", omittingEmptySubsequences: true)
                guard words.count >= 2, let receive = Int(words[0]), let send = Int(words[1]) else { continue }
                memory.sockets += 1
                memory.receiveQueue += receive
                memory.sendQueue += send
            }
        }
        return memory
    }

    /// One side of the sockets `snapshot` sorts: those whose local port (or peer port) is `port`.
    struct Side {
        let local: Bool
        let port: UInt16
        static func local(_ port: UInt16) -> Side { Side(local: true, port: port) }
        static func peer(_ port: UInt16) -> Side { Side(local: false, port: port) }
    }

    /// The established sockets of each side, from one `ss` dump: the queues of every side
    /// are read at the same moment, so bytes on their way from one to another count once.
    static func snapshot(_ sides: [Side]) throws -> [SocketMemory] {
        let output = try Program.run("/usr/bin/ss", ["-tnmH", "state", "established"])
        var memories = Array(repeating: SocketMemory(), count: sides.count)
        var current: Int?
        func port(_ endpoint: Substring) -> UInt16? { endpoint.split(separator: ":").last.flatMap { UInt16($0) } }
        for line in output.stdout.split(separator: "\n") {
            let text = String(line).trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("skmem:(") {
                guard let index = current else { continue }
                for field in text.dropFirst(7).dropLast().split(separator: ",") {
                    if field.hasPrefix("r"), !field.hasPrefix("rb"), let value = Int(field.dropFirst()) {
                        memories[index].charged += value
                    }
                    if field.hasPrefix("w"), let value = Int(field.dropFirst()) { memories[index].charged += value }
                }
                continue
            }
            current = nil
            let words = text.split(separator: " ", omittingEmptySubsequences: true)
            guard words.count >= 4, let receive = Int(words[0]), let send = Int(words[1]) else { continue }
            let local = port(words[2])
            let peer = port(words[3])
            guard let index = sides.firstIndex(where: { ($0.local ? local : peer) == $0.port }) else { continue }
            current = index
            memories[index].sockets += 1
            memories[index].receiveQueue += receive
            memories[index].sendQueue += send
        }
        return memories
    }
}
