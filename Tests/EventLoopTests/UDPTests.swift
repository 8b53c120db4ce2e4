import EventLoop
import Glibc
import Synchronization
import SystemIO
import TestSupport
import Testing

/// Counters a UDP server on a loop publishes to the test thread.
private final class UDPStats: Sendable {
    let datagrams = Atomic<Int>(0)
    let wakeups = Atomic<Int>(0)
    let largestBatch = Atomic<Int>(0)
}

/// Echoes every datagram back to its source, a batch per wake-up: recvmmsg in, sendmmsg out.
private final class UDPEchoServer: Selectable {
    let socket: Socket
    let stats: UDPStats
    let incoming = DatagramBatch(slots: 64, slotSize: 2_048)
    let outgoing = DatagramBatch(slots: 64, slotSize: 2_048)

    init(socket: Socket, stats: UDPStats) {
        self.socket = socket
        self.stats = stats
    }

    func readable() {
        stats.wakeups.add(1, ordering: .relaxed)
        while let count = try? socket.receive(into: incoming), count > 0 {
            stats.datagrams.add(count, ordering: .relaxed)
            stats.largestBatch.max(count, ordering: .relaxed)
            outgoing.removeAll()
            for index in 0..<count {
                outgoing.append(incoming.bytes(at: index), to: incoming.address(at: index)!)
            }
            // A full socket buffer drops the rest: that is UDP (the client resends).
            _ = try? socket.send(outgoing)
        }
    }

    func writable() {}
    func hangup() {}
}

@Suite struct UDPTests {
    /// 10,000 numbered datagrams in bursts of 50; the client resends what did not come back.
    @Test(arguments: [SocketAddress.Family.ipv4, .ipv6])
    func echoTenThousandDatagrams(family: SocketAddress.Family) throws {
        try withLoops { group in
            let loop = group.loops[0]
            let stats = UDPStats()
            let server = try loop.sync { () -> SocketAddress in
                let socket = try Socket.udp(bindingTo: loopback(family))
                try loop.register(
                    socket.descriptor, interest: .read, handler: UDPEchoServer(socket: socket, stats: stats))
                return socket.address!
            }
            #expect(server.port != 0)

            let client = try Socket.udp(bindingTo: loopback(family))
            let total = 10_000
            var answered = [Bool](repeating: false, count: total)
            var answeredCount = 0
            let outgoing = DatagramBatch(slots: 50, slotSize: 64)
            let incoming = DatagramBatch(slots: 64, slotSize: 64)
            var wrongSource = 0
            for burst in stride(from: 0, to: total, by: 50) {
                for attempt in 0..<5 {
                    outgoing.removeAll()
                    for sequence in burst..<burst + 50 where !answered[sequence] {
                        var value = UInt32(sequence).bigEndian
                        withUnsafeBytes(of: &value) { _ = outgoing.append($0, to: server) }
                    }
                    if outgoing.count == 0 { break }
                    var sent = 0
                    while sent < outgoing.count, waitReady(client.descriptor, POLLOUT) {
                        sent += try client.send(outgoing, from: sent)
                    }
                    // Collect replies until the burst is complete or the wait runs out.
                    let wait: Nanoseconds = attempt == 0 ? 2_000_000_000 : 500_000_000
                    let deadline = SystemClock().now() + wait
                    while (burst..<burst + 50).contains(where: { !answered[$0] }), SystemClock().now() < deadline {
                        guard waitReady(client.descriptor, POLLIN, timeout: 50_000_000) else { continue }
                        let count = try client.receive(into: incoming)
                        for index in 0..<count {
                            if incoming.address(at: index) != server { wrongSource += 1 }
                            let bytes = incoming.bytes(at: index)
                            guard bytes.count == 4 else { continue }
                            let sequence = Int(UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self)))
                            if sequence < total, !answered[sequence] {
                                answered[sequence] = true
                                answeredCount += 1
                            }
                        }
                    }
                }
            }
            #expect(answeredCount == total)
            #expect(wrongSource == 0)
            #expect(stats.datagrams.load(ordering: .relaxed) >= total)
            // Several datagrams per wake-up: the batch receive was exercised.
            #expect(stats.largestBatch.load(ordering: .relaxed) > 1)
            #expect(stats.wakeups.load(ordering: .relaxed) < stats.datagrams.load(ordering: .relaxed))
        }
    }

    @Test func reusePortLetsTwoSocketsShareAPortAndBothReceive() throws {
        let first = try Socket.udp(bindingTo: loopback(), reusePort: true)
        let port = first.address!.port
        let second = try Socket.udp(bindingTo: loopback().withPort(port), reusePort: true)
        #expect(second.address!.port == port)
        // The kernel spreads by source address and port: new client sockets until both got some.
        var received = [0, 0]
        var buffer = ByteBuffer()
        for _ in 0..<400 where received.contains(0) {
            let client = try Socket.udp(bindingTo: loopback())
            let byte: [UInt8] = [1]
            _ = try byte.withUnsafeBytes { try client.send($0, to: first.address!) }
            for (index, socket) in [first, second].enumerated() {
                while try socket.receive(into: &buffer) != nil { received[index] += 1 }
            }
        }
        #expect(
            waitUntil(timeout: 1_000_000_000) {
                for (index, socket) in [first, second].enumerated() {
                    while (try? socket.receive(into: &buffer)) ?? nil != nil { received[index] += 1 }
                }
                return !received.contains(0)
            })
    }

    @Test func withoutReusePortTheSecondBindFails() throws {
        let first = try Socket.udp(bindingTo: loopback())
        let port = first.address!.port
        let taken = loopback().withPort(port)
        #expect(throws: SystemError("bind", errno: EADDRINUSE, subject: taken.description)) {
            try Socket.udp(bindingTo: taken)
        }
        // Both sockets must ask for it: a reusePort newcomer cannot join a plain socket either.
        #expect(throws: SystemError("bind", errno: EADDRINUSE, subject: taken.description)) {
            try Socket.udp(bindingTo: taken, reusePort: true)
        }
    }

    @Test func connectedSocketTalksToItsPeerOnly() throws {
        let server = try Socket.udp(bindingTo: loopback())
        let client = try Socket.udp(connectedTo: server.address!)
        let payload: [UInt8] = [1, 2, 3]
        #expect(try payload.withUnsafeBytes { try client.send($0) } == .processed(3))
        #expect(waitReady(server.descriptor, POLLIN))
        var buffer = ByteBuffer()
        let source = try #require(try server.receive(into: &buffer))
        #expect(buffer.readBytes(length: 3) == payload)
        #expect(try server.receive(into: &buffer) == nil)  // EAGAIN is a value, not an error
        _ = try payload.withUnsafeBytes { try server.send($0, to: source) }
        #expect(waitReady(client.descriptor, POLLIN))
        #expect(try client.receive(into: &buffer) == server.address)
        #expect(buffer.readableBytes == 3)
    }
}
