import EventLoop
import Glibc
import SystemIO
import TestSupport
import Testing

@testable import HTTPProxy

/// The system-call budget of a tunnel's relay (docs/performance.md#keep-alive-tunnels): a
/// small exchange costs one read and one write per direction and nothing else — no read
/// that ends in EAGAIN, no epoll_ctl, no splice — and a read that fills the copy buffer
/// moves the rest of that direction by splice. The relay is driven by hand on a loop that
/// is not running, as the loop would drive it, over Unix stream socket pairs.
@Suite(.blocking) struct TunnelRelayTests {
    /// Holds a registration so that the relay can change its interest; the test itself
    /// tells the relay when a socket is readable.
    final class Quiet: Selectable {
        func readable() {}
        func writable() {}
        func hangup() {}
    }

    /// The relay between two socket pairs: the proxy's ends are registered, the test keeps
    /// the browser's and the origin's.
    struct Rig {
        let loop: EventLoop
        let relay: TunnelRelay
        let browser: Socket
        let origin: Socket
        let proxyEnds: [Socket]
        let quiet = Quiet()

        init() throws {
            loop = try EventLoop(clock: ManualClock())
            let (client, browser) = try Self.pair()
            let (upstream, origin) = try Self.pair()
            try loop.register(client.descriptor, interest: .read, handler: quiet)
            try loop.register(upstream.descriptor, interest: .read, handler: quiet)
            relay = TunnelRelay(
                loop: loop, buffers: RelayBuffers(), client: client, upstream: upstream,
                toUpstream: ByteBuffer(capacity: 0), toClient: ByteBuffer(capacity: 0))
            self.browser = browser
            self.origin = origin
            proxyEnds = [client, upstream]
            try relay.start()
        }

        func close() {
            relay.stop()
            for end in proxyEnds {
                try? loop.deregister(end.descriptor)
                end.close()
            }
        }

        static func pair() throws -> (Socket, Socket) {
            var descriptors: [Int32] = [-1, -1]
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            try #require(socketpair(AF_UNIX, type, 0, &descriptors) == 0)
            return (
                Socket(descriptor: descriptors[0], address: nil), Socket(descriptor: descriptors[1], address: nil)
            )
        }
    }

    static func send(_ bytes: [UInt8], on socket: Socket) throws {
        let written = try bytes.withUnsafeBytes { raw in try socket.write(raw) }
        #expect(written == .processed(bytes.count))
    }

    /// Everything waiting on `socket`, up to `limit` bytes.
    static func receive(from socket: Socket, limit: Int) throws -> [UInt8] {
        var buffer = ByteBuffer(capacity: limit)
        while buffer.readableBytes < limit {
            guard case .processed = try socket.read(into: &buffer, maxBytes: limit - buffer.readableBytes) else {
                break
            }
        }
        return buffer.readBytes(length: buffer.readableBytes) ?? []
    }

    @Test func aKeepAliveExchangeCostsOneReadAndOneWritePerDirection() throws {
        let rig = try Rig()
        defer { rig.close() }
        let request = [UInt8]("GET /small HTTP/1.1\r\nHost: a.example\r\n\r\n".utf8)
        let response = [UInt8](repeating: 0x78, count: 1_300)
        for _ in 0..<100 {
            try Self.send(request, on: rig.browser)
            try rig.relay.readable(.client)
            #expect(try Self.receive(from: rig.origin, limit: request.count) == request)
            try Self.send(response, on: rig.origin)
            try rig.relay.readable(.upstream)
            #expect(try Self.receive(from: rig.browser, limit: response.count) == response)
        }
        #expect(rig.relay.calls == TunnelRelay.Calls(reads: 200, emptyReads: 0, writes: 200, interestChanges: 0))
    }

    @Test func aReadThatFillsTheCopyBufferTurnsItsDirectionToSplice() throws {
        let rig = try Rig()
        defer { rig.close() }
        let bulk = (0..<(RelayBuffers.copyLimit * 4)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try Self.send(bulk, on: rig.origin)
        try rig.relay.readable(.upstream)
        #expect(try Self.receive(from: rig.browser, limit: bulk.count) == bulk)
        // One copied read (the one that filled the buffer), then the rest by splice.
        #expect(rig.relay.calls.reads == 1)
        #expect(rig.relay.calls.writes == 1)
        #expect(rig.relay.calls.splices >= 2)
        // The other direction is still small and still copied.
        try Self.send([1, 2, 3], on: rig.browser)
        try rig.relay.readable(.client)
        #expect(try Self.receive(from: rig.origin, limit: 3) == [1, 2, 3])
        #expect(rig.relay.calls.reads == 2)
    }
}
