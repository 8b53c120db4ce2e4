import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A tiny UDP "upstream" on 127.0.0.1 written for one test: a thread with a socket that
/// hands every query to `respond` and carries out what it returns — datagrams sent back
/// in order (from its own port, or from a second socket on another port), pauses
/// between them, or nothing at all (a silent, black-holed upstream). Stopped and closed
/// when released.
public final class FakeUDPUpstream: @unchecked Sendable {
    // Sendable: immutable after init; the sockets and the thread's state live in `core`.
    public enum Action: Sendable {
        /// A datagram to the asker, from the port it asked.
        case send([UInt8])
        /// A datagram to the asker from another port of ours (a spoofer's try).
        case sendFromOtherPort([UInt8])
        /// A pause before the next action.
        case pause(milliseconds: Int)
    }

    public let port: UInt16
    /// `127.0.0.1:PORT`, as `--upstream` takes it.
    public var spec: String { "127.0.0.1:\(port)" }
    private let core: Core

    public init(_ respond: @escaping @Sendable (_ query: [UInt8]) -> [Action]) throws {
        let socketFD = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        let otherFD = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard socketFD >= 0, otherFD >= 0, Self.bindLoopback(socketFD) != nil, Self.bindLoopback(otherFD) != nil,
            let bound = Self.boundPort(socketFD)
        else {
            close(socketFD)
            close(otherFD)
            throw SpawnedServerError(message: "fake upstream: cannot bind a UDP socket on 127.0.0.1")
        }
        port = bound
        // The thread holds the core, not this object, so releasing this object stops it.
        let core = Core(socketFD: socketFD, otherFD: otherFD)
        self.core = core
        let thread = Thread { core.serve(respond) }
        thread.name = "fake-udp-upstream"
        thread.start()
    }

    deinit { core.stop() }

    /// The queries it has received so far, in order.
    public var queries: [[UInt8]] { core.queries }

    /// Stops the thread (within about 50 ms) and closes the sockets. Idempotent.
    public func stop() { core.stop() }

    /// The sockets and what the thread shares with the test.
    private final class Core: @unchecked Sendable {
        // Sendable: the descriptors are immutable; what the thread and the test share is behind `lock`.
        let socketFD: Int32
        let otherFD: Int32
        private let lock = NSLock()
        private var stopped = false
        private var received: [[UInt8]] = []
        private let finished = DispatchSemaphore(value: 0)

        init(socketFD: Int32, otherFD: Int32) {
            self.socketFD = socketFD
            self.otherFD = otherFD
        }

        var queries: [[UInt8]] {
            lock.lock()
            defer { lock.unlock() }
            return received
        }

        func stop() {
            lock.lock()
            let wasStopped = stopped
            stopped = true
            lock.unlock()
            guard !wasStopped else { return }
            finished.wait()
            close(socketFD)
            close(otherFD)
        }

        private var isStopped: Bool {
            lock.lock()
            defer { lock.unlock() }
            return stopped
        }

        func serve(_ respond: @Sendable ([UInt8]) -> [Action]) {
            defer { finished.signal() }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while !isStopped {
                var poller = pollfd(fd: socketFD, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                var source = sockaddr_in()
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let count = buffer.withUnsafeMutableBytes { bytes in
                    withUnsafeMutablePointer(to: &source) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            recvfrom(socketFD, bytes.baseAddress, bytes.count, 0, $0, &length)
                        }
                    }
                }
                guard count > 0 else { continue }
                let query = Array(buffer[0..<count])
                lock.lock()
                received.append(query)
                lock.unlock()
                for action in respond(query) {
                    switch action {
                    case .send(let datagram): FakeUDPUpstream.send(datagram, from: socketFD, to: source)
                    case .sendFromOtherPort(let datagram): FakeUDPUpstream.send(datagram, from: otherFD, to: source)
                    case .pause(let milliseconds): usleep(UInt32(milliseconds) * 1000)
                    }
                }
            }
        }
    }

    fileprivate static func send(_ datagram: [UInt8], from fd: Int32, to destination: sockaddr_in) {
        var destination = destination
        _ = datagram.withUnsafeBytes { bytes in
            withUnsafePointer(to: &destination) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    private static func bindLoopback(_ fd: Int32) -> Void? {
        var address = sockaddr_in.loopback(0)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0 ? () : nil
    }

    private static func boundPort(_ fd: Int32) -> UInt16? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return result == 0 ? UInt16(bigEndian: address.sin_port) : nil
    }
}

/// Just enough DNS to answer a query in a fake upstream: the ID, the question, and a reply
/// with A records, built by hand so a test can forge any part of it.
public enum FakeDNS {
    /// The query's ID.
    public static func id(of message: [UInt8]) -> UInt16 {
        message.count >= 2 ? UInt16(message[0]) << 8 | UInt16(message[1]) : 0
    }

    /// The question's name as dotted text ("www.example.test"), lowercased.
    public static func questionName(of message: [UInt8]) -> String? {
        guard let end = questionEnd(of: message) else { return nil }
        var labels: [String] = []
        var offset = 12
        while offset < end - 4, message[offset] != 0 {
            let length = Int(message[offset])
            labels.append(String(decoding: message[(offset + 1)..<(offset + 1 + length)], as: UTF8.self))
            offset += 1 + length
        }
        return labels.joined(separator: ".").lowercased()
    }

    /// The end of the (first) question: after its name, type and class.
    static func questionEnd(of message: [UInt8]) -> Int? {
        var offset = 12
        while offset < message.count {
            let length = Int(message[offset])
            if length == 0 { return offset + 5 <= message.count ? offset + 5 : nil }
            guard length < 64 else { return nil }
            offset += 1 + length
        }
        return nil
    }

    /// A reply to `query` (NOERROR unless `rcode` says otherwise) with one A record per
    /// address (TTL `ttl`), QR, RD and RA set; `id` replaces the query's ID and
    /// `questionName` its question (to forge one).
    public static func reply(
        to query: [UInt8], addresses: [String], ttl: UInt32 = 300, id: UInt16? = nil,
        questionName: String? = nil, isResponse: Bool = true, rcode: UInt8 = 0
    ) -> [UInt8] {
        guard let end = questionEnd(of: query) else { return [] }
        let answerID = id ?? Self.id(of: query)
        var question = Array(query[12..<end])
        if let questionName {
            question = []
            for label in questionName.split(separator: ".") {
                question += [UInt8(label.utf8.count)] + Array(label.utf8)
            }
            question += [0] + Array(query[(end - 4)..<end])
        }
        var message: [UInt8] = [
            UInt8(answerID >> 8), UInt8(answerID & 0xFF), (isResponse ? 0x80 : 0) | 0x01, 0x80 | (rcode & 0x0F),
            0, 1, 0, UInt8(addresses.count), 0, 0, 0, 0,
        ]
        message += question
        for address in addresses {
            var bits = in_addr()
            inet_pton(AF_INET, address, &bits)
            let octets = withUnsafeBytes(of: bits.s_addr) { Array($0) }
            message +=
                [
                    0xC0, 12, 0, 1, 0, 1, UInt8(ttl >> 24), UInt8(ttl >> 16 & 0xFF), UInt8(ttl >> 8 & 0xFF),
                    UInt8(ttl & 0xFF),
                    0, 4,
                ] + octets
        }
        return message
    }
}
