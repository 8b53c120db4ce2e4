import EventLoop
import Glibc
import SystemIO
import TestSupport
import Testing

/// A two-way relay between two TCP sockets through two `SplicePipe`s, driven by a loop —
/// the primitive a CONNECT tunnel is built on, in its simplest form. Loop-confined.
private final class SpliceRelay {
    let loop: EventLoop
    let sockets: [Socket]
    /// `pipes[d]` carries direction d: from `sockets[d]` to `sockets[1 - d]`.
    let pipes: [SplicePipe]
    var inputEnded = [false, false]
    var outputShut = [false, false]
    let finished: Shared<String?>

    init(loop: EventLoop, _ left: Socket, _ right: Socket, finished: Shared<String?>) throws {
        self.loop = loop
        sockets = [left, right]
        pipes = [try SplicePipe(), try SplicePipe(capacity: 1 << 17)]
        self.finished = finished
        for side in 0..<2 {
            try loop.register(sockets[side].descriptor, interest: .read, handler: RelayEnd(relay: self, side: side))
        }
    }

    /// Moves direction `d` as far as it goes: drain first, so a fill that would block can
    /// only mean the source is empty (the pipe is).
    func pump(_ direction: Int) {
        let (source, destination, pipe) = (sockets[direction], sockets[1 - direction], pipes[direction])
        do {
            moving: while true {
                if !pipe.isEmpty {
                    guard case .processed = try pipe.drain(to: destination) else { break moving }
                    continue
                }
                if inputEnded[direction] {
                    if !outputShut[direction] {
                        try destination.shutdown(.write)  // pass the half-close on
                        outputShut[direction] = true
                    }
                    break moving
                }
                switch try pipe.fill(from: source) {
                case .processed: continue
                case .eof: inputEnded[direction] = true
                case .wouldBlock: break moving
                }
            }
            try updateInterest()
        } catch {
            finish("error: \(error)")
        }
    }

    private func updateInterest() throws(SystemError) {
        if outputShut == [true, true] { return finish("done") }
        for side in 0..<2 {
            var interest = Interest.none
            if !inputEnded[side] && pipes[side].isEmpty { interest.insert(.read) }
            if !pipes[1 - side].isEmpty { interest.insert(.write) }
            try loop.setInterest(interest, for: sockets[side].descriptor)
        }
    }

    func finish(_ outcome: String) {
        for socket in sockets where socket.isOpen {
            try? loop.deregister(socket.descriptor)
            socket.close()
        }
        finished.update { $0 = $0 ?? outcome }
    }
}

private final class RelayEnd: Selectable {
    let relay: SpliceRelay
    let side: Int

    init(relay: SpliceRelay, side: Int) {
        self.relay = relay
        self.side = side
    }

    func readable() { relay.pump(side) }
    func writable() { relay.pump(1 - side) }
    func hangup() { relay.finish("hangup on side \(side)") }
}

@Suite struct SpliceTests {
    /// left client ⇄ [a | relay on the loop | b] ⇄ right client: 2 MB each way at once,
    /// then each client half-closes and must see the other's EOF come through.
    @Test func relaysBothWaysAndPassesTheHalfClose() throws {
        let listener = try Socket.listen(on: loopback())
        func pair() throws -> (client: Socket, accepted: Socket) {
            let client = try Socket.connect(to: listener.address!)
            #expect(waitReady(listener.descriptor, POLLIN))
            let accepted = try #require(try listener.accept())
            return (client, accepted)
        }
        let (left, a) = try pair()
        let (right, b) = try pair()
        try withLoops { group in
            let loop = group.loops[0]
            let finished = Shared<String?>(nil)
            try loop.sync { _ = try SpliceRelay(loop: loop, a, b, finished: finished) }

            let clients = [left, right]
            let size = 2 << 20
            var sent = [0, 0]
            var received = [0, 0]
            var mismatches = 0
            var eof = [false, false]
            var chunk = ByteBuffer(capacity: 65_536)
            // Every byte made and checked one at a time: under ThreadSanitizer, beside the
            // rest of the suite on two cores, the transfer alone has taken ten seconds, and
            // forty when the store's suites ran beside it.
            let deadline = SystemClock().now() + (Allocations.counted ? 4 : 9) * testTimeout
            while !(eof[0] && eof[1]), SystemClock().now() < deadline {
                var entries = clients.indices.map { side in
                    pollfd(
                        fd: clients[side].descriptor, events: Int16(POLLIN | (sent[side] < size ? POLLOUT : 0)),
                        revents: 0)
                }
                guard poll(&entries, 2, 100) > 0 else { continue }
                for side in 0..<2 {
                    if entries[side].revents & Int16(POLLOUT) != 0, sent[side] < size {
                        let count = min(65_536, size - sent[side])
                        chunk.clear()
                        chunk.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { space in
                            for index in 0..<count { space[index] = patternByte(sent[side] + index, seed: side) }
                            return count
                        }
                        if case .processed(let n) = try clients[side].write(from: &chunk) { sent[side] += n }
                        if sent[side] == size { try clients[side].shutdown(.write) }
                    }
                    if entries[side].revents & Int16(POLLIN | POLLHUP) != 0, !eof[side] {
                        chunk.clear()
                        switch try clients[side].read(into: &chunk, maxBytes: 65_536) {
                        case .eof: eof[side] = true
                        case .wouldBlock: break
                        case .processed:
                            chunk.withUnsafeReadableBytes { bytes in
                                for (index, byte) in bytes.enumerated()
                                where byte != patternByte(received[side] + index, seed: 1 - side) { mismatches += 1 }
                            }
                            received[side] += chunk.readableBytes
                        }
                    }
                }
            }
            #expect(sent == [size, size] && received == [size, size] && mismatches == 0)
            #expect(eof == [true, true])
            #expect(waitUntil { finished.value != nil })
            #expect(finished.value == "done")
        }
    }

    @Test func pipeReportsEOFAndWouldBlock() throws {
        let listener = try Socket.listen(on: loopback())
        let client = try Socket.connect(to: listener.address!)
        #expect(waitReady(listener.descriptor, POLLIN))
        let server = try #require(try listener.accept())
        let pipe = try SplicePipe()
        #expect(pipe.capacity >= 4_096 && pipe.isEmpty)
        #expect(try pipe.fill(from: server) == .wouldBlock)
        let bytes: [UInt8] = [1, 2, 3, 4]
        _ = try bytes.withUnsafeBytes { try client.write($0) }
        #expect(waitReady(server.descriptor, POLLIN))
        #expect(try pipe.fill(from: server) == .processed(4))
        #expect(pipe.buffered == 4)
        #expect(try pipe.drain(to: server) == .processed(4))  // back to the client
        #expect(pipe.isEmpty)
        var echoed = ByteBuffer()
        #expect(waitReady(client.descriptor, POLLIN))
        #expect(try client.read(into: &echoed) == .processed(4))
        try client.shutdown(.write)
        #expect(waitReady(server.descriptor, POLLIN))
        #expect(try pipe.fill(from: server) == .eof)
    }
}
