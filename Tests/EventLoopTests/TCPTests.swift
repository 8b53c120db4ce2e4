import EventLoop
import Glibc
import Synchronization
import SystemIO
import TestSupport
import Testing

@Suite struct TCPTests {
    /// Starts an echo listener on `loop` and returns its address.
    private func startEchoServer(
        on loop: EventLoop, family: SocketAddress.Family = .ipv4, stats: EchoServerStats,
        sendBufferSize: Int32? = nil
    ) throws -> SocketAddress {
        try loop.sync {
            let listener = try Socket.listen(on: loopback(family), backlog: 512)
            let handler = EchoListener(socket: listener, loop: loop, stats: stats, sendBufferSize: sendBufferSize)
            try loop.register(listener.descriptor, interest: .read, handler: handler)
            return listener.address!
        }
    }

    @Test(arguments: [SocketAddress.Family.ipv4, .ipv6])
    func manyConcurrentConnections(family: SocketAddress.Family) throws {
        try withLoops(2) { group in
            let stats = EchoServerStats()
            let server = try startEchoServer(on: group.loops[0], family: family, stats: stats)
            let clients = group.loops[1]
            let results = Shared<[EchoResult]>([])
            let count = 200
            try clients.sync {
                for seed in 0..<count {
                    _ = try EchoClient(loop: clients, to: server, size: 20_000 + seed * 101, seed: seed) { result in
                        results.update { $0.append(result) }
                    }
                }
            }
            // A bound, not a timing: under ThreadSanitizer (scripts/tsan) 200 echoes take seconds.
            #expect(waitUntil(timeout: 60_000_000_000) { results.value.count == count })
            let all = results.value
            #expect(all.allSatisfy { $0.error == nil && $0.sawEOF && $0.mismatches == 0 && $0.received == $0.sent })
            #expect(stats.accepted.load(ordering: .relaxed) == count)
            #expect(waitUntil { stats.closed.load(ordering: .relaxed) == count })
            #expect(stats.errors.load(ordering: .relaxed) == 0)
        }
    }

    /// 8 MB through 64 KiB server send buffers: writes stop short, the server toggles to
    /// `.write` and back; the client half-closes after sending and still gets the rest.
    @Test func largeTransferWithPartialWritesAndHalfClose() throws {
        try withLoops(2) { group in
            let stats = EchoServerStats()
            let server = try startEchoServer(on: group.loops[0], stats: stats, sendBufferSize: 64 * 1024)
            let clients = group.loops[1]
            let outcome = Shared<EchoResult?>(nil)
            let size = 8 << 20
            try clients.sync {
                _ = try EchoClient(loop: clients, to: server, size: size, seed: 99) { result in
                    outcome.update { $0 = result }
                }
            }
            #expect(waitUntil(timeout: 60_000_000_000) { outcome.value != nil })
            let result = try #require(outcome.value)
            #expect(result.error == nil)
            #expect(result.sent == size && result.received == size && result.mismatches == 0)
            #expect(result.sawEOF)
            #expect(result.receivedAfterHalfClose > 0)
            #expect(stats.partialWrites.load(ordering: .relaxed) > 0)
            #expect(stats.errors.load(ordering: .relaxed) == 0)
        }
    }

    @Test func readReportsEOFWhenThePeerCloses() throws {
        let listener = try Socket.listen(on: loopback())
        let client = try Socket.connect(to: listener.address!)
        #expect(waitReady(listener.descriptor, POLLIN))
        let accepted = try #require(try listener.accept())
        #expect(accepted.address?.port == (try client.localAddress()).port)
        #expect(try listener.accept() == nil)  // nothing else pending: EAGAIN is a value
        #expect(waitReady(client.descriptor, POLLOUT))
        try client.finishConnect()
        var buffer = ByteBuffer()
        #expect(try accepted.read(into: &buffer) == .wouldBlock)
        let hello: [UInt8] = Array("hi".utf8)
        #expect(try hello.withUnsafeBytes { try client.write($0) } == .processed(2))
        client.close()
        #expect(waitReady(accepted.descriptor, POLLIN))
        #expect(try accepted.read(into: &buffer) == .processed(2))
        #expect(try accepted.read(into: &buffer) == .eof)
        #expect(buffer.readString(length: 2) == "hi")
    }

    /// The proxy sets TCP_NODELAY on its listener only, counting on the kernel to give
    /// it to each accepted socket; a kernel that did not would put Nagle's delay back on
    /// every tunnel's client side.
    @Test func acceptedSocketsInheritTheListenersNoDelay() throws {
        for noDelay in [true, false] {
            let listener = try Socket.listen(on: loopback())
            defer { listener.close() }
            if noDelay { try listener.setNoDelay() }
            let client = try Socket.connect(to: listener.address!)
            defer { client.close() }
            #expect(waitReady(listener.descriptor, POLLIN))
            let accepted = try #require(try listener.accept())
            defer { accepted.close() }
            #expect(try accepted.option(level: Int32(IPPROTO_TCP), name: TCP_NODELAY) == (noDelay ? 1 : 0))
        }
    }

    /// A system call's error subject (an address, formatted with `inet_ntop`, a `sprintf`)
    /// is made only when the call fails: a tunnel's `socket`, `shutdown` and `setsockopt`
    /// succeed, and used to format it every time.
    @Test func aSystemCallsSubjectIsFormattedOnlyOnFailure() throws {
        let formatted = Shared(0)
        func subject() -> String {
            formatted.update { $0 += 1 }
            return "the subject"
        }
        #expect(try systemCall("getpid", subject: subject()) { getpid() } > 0)
        #expect(formatted.value == 0)
        #expect(throws: SystemError("close", errno: EBADF, subject: "the subject")) {
            try systemCall("close", subject: subject()) { close(-1) }
        }
        #expect(formatted.value == 1)
    }

    @Test func connectToAClosedPortIsRefused() throws {
        let closed = try Socket.listen(on: loopback())
        let address = closed.address!
        closed.close()
        do {
            // Refused at once (usual on loopback) or reported through writability + SO_ERROR.
            let socket = try Socket.connect(to: address)
            #expect(waitReady(socket.descriptor, POLLOUT))
            try socket.finishConnect()
            Issue.record("connect to a closed port succeeded")
        } catch {
            #expect(error == SystemError("connect", errno: ECONNREFUSED, subject: address.description))
        }
    }

    /// The same refusal seen by a handler on a loop: writable, then finishConnect throws.
    @Test func refusedConnectOnALoop() throws {
        let closed = try Socket.listen(on: loopback())
        let address = closed.address!
        closed.close()
        try withLoops { group in
            let loop = group.loops[0]
            let outcome = Shared<EchoResult?>(nil)
            let immediate = try loop.sync { () -> SystemError? in
                do {
                    _ = try EchoClient(loop: loop, to: address, size: 1, seed: 0) { result in
                        outcome.update { $0 = result }
                    }
                    return nil
                } catch let error as SystemError { return error }
            }
            if let immediate {
                #expect(immediate.errno == ECONNREFUSED && immediate.call == "connect")
            } else {
                #expect(waitUntil { outcome.value != nil })
                #expect(
                    outcome.value?.error == SystemError("connect", errno: ECONNREFUSED, subject: address.description))
            }
        }
    }

    @Test func listenersOnTheSamePortNeedReusePort() throws {
        let first = try Socket.listen(on: loopback(), reusePort: true)
        let port = first.address!.port
        let second = try Socket.listen(on: loopback().withPort(port), reusePort: true)
        #expect(second.address?.port == port)
        #expect(throws: SystemError.self) { try Socket.listen(on: loopback().withPort(port)) }
    }
}
