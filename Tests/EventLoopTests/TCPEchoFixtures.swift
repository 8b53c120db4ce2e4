import EventLoop
import Glibc
import Synchronization
import SystemIO

/// What the TCP echo server saw, published to the test thread.
final class EchoServerStats: Sendable {
    let accepted = Atomic<Int>(0)
    let closed = Atomic<Int>(0)
    /// Writes that stopped short (the socket buffer was full) and so armed `.write`.
    let partialWrites = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
}

/// Accepts connections and gives each an `EchoConnection`. Loop-confined.
final class EchoListener: Selectable {
    let socket: Socket
    let loop: EventLoop
    let stats: EchoServerStats
    let sendBufferSize: Int32?

    init(socket: Socket, loop: EventLoop, stats: EchoServerStats, sendBufferSize: Int32?) {
        self.socket = socket
        self.loop = loop
        self.stats = stats
        self.sendBufferSize = sendBufferSize
    }

    func readable() {
        while let connection = try? socket.accept() {
            stats.accepted.add(1, ordering: .relaxed)
            if let sendBufferSize { try? connection.setBufferSizes(send: sendBufferSize) }
            let handler = EchoConnection(socket: connection, loop: loop, stats: stats)
            do { try loop.register(connection.descriptor, interest: .read, handler: handler) } catch {
                stats.errors.add(1, ordering: .relaxed)
            }
        }
    }

    func writable() {}
    func hangup() {}
}

/// Echoes what it reads; when the socket will not take everything, stops reading (so memory
/// stays bounded) and waits for `.write`. After the client's EOF it writes what is left,
/// half-closes and closes.
final class EchoConnection: Selectable {
    let socket: Socket
    let loop: EventLoop
    let stats: EchoServerStats
    var pending = ByteBuffer(capacity: 64 * 1024)
    var sawEOF = false

    init(socket: Socket, loop: EventLoop, stats: EchoServerStats) {
        self.socket = socket
        self.loop = loop
        self.stats = stats
    }

    func readable() {
        do {
            readLoop: while pending.readableBytes < 256 * 1024 {
                switch try socket.read(into: &pending, maxBytes: 64 * 1024) {
                case .processed: continue
                case .wouldBlock: break readLoop
                case .eof:
                    sawEOF = true
                    break readLoop
                }
            }
            try flush()
        } catch {
            fail()
        }
    }

    func writable() {
        do { try flush() } catch { fail() }
    }

    func hangup() { fail() }

    private func flush() throws(SystemError) {
        while pending.readableBytes > 0 {
            guard case .processed(let count) = try socket.write(from: &pending), count > 0 else {
                stats.partialWrites.add(1, ordering: .relaxed)
                try loop.setInterest(.write, for: socket.descriptor)
                return
            }
        }
        pending.clear()
        if sawEOF {
            try socket.shutdown(.write)
            finish()
        } else {
            try loop.setInterest(.read, for: socket.descriptor)
        }
    }

    private func fail() {
        stats.errors.add(1, ordering: .relaxed)
        finish()
    }

    private func finish() {
        try? loop.deregister(socket.descriptor)
        socket.close()
        stats.closed.add(1, ordering: .relaxed)
    }
}

/// One client's outcome.
struct EchoResult: Sendable, Equatable {
    var sent = 0
    var received = 0
    var receivedAfterHalfClose = 0
    var mismatches = 0
    var sawEOF = false
    var error: SystemError?
}

/// Connects without blocking, sends `size` pattern bytes while reading the echo, then
/// half-closes and keeps reading until EOF. Loop-confined; reports through `done`.
final class EchoClient: Selectable {
    let loop: EventLoop
    let socket: Socket
    let size: Int
    let seed: Int
    let done: @Sendable (EchoResult) -> Void
    var connected = false
    var halfClosed = false
    var result = EchoResult()
    var outgoing = ByteBuffer(capacity: 64 * 1024)
    var incoming = ByteBuffer(capacity: 64 * 1024)

    init(
        loop: EventLoop, to server: SocketAddress, size: Int, seed: Int, done: @escaping @Sendable (EchoResult) -> Void
    ) throws(SystemError) {
        self.loop = loop
        socket = try Socket.connect(to: server)
        self.size = size
        self.seed = seed
        self.done = done
        try loop.register(socket.descriptor, interest: .write, handler: self)  // the connect's outcome
    }

    func writable() {
        do {
            if !connected {
                try socket.finishConnect()
                connected = true
                try loop.setInterest(.both, for: socket.descriptor)
            }
            while result.sent < size || outgoing.readableBytes > 0 {
                if outgoing.readableBytes == 0 {
                    let chunk = min(32 * 1024, size - result.sent)
                    outgoing.clear()
                    outgoing.writeWithUnsafeMutableBytes(minimumWritableBytes: chunk) { space in
                        for index in 0..<chunk { space[index] = patternByte(result.sent + index, seed: seed) }
                        return chunk
                    }
                    result.sent += chunk
                }
                guard case .processed(let count) = try socket.write(from: &outgoing), count > 0 else { return }
            }
            try socket.shutdown(.write)
            halfClosed = true
            try loop.setInterest(.read, for: socket.descriptor)
        } catch {
            end(error)
        }
    }

    func readable() {
        do {
            while true {
                switch try socket.read(into: &incoming, maxBytes: 64 * 1024) {
                case .wouldBlock: return
                case .eof:
                    result.sawEOF = true
                    end(nil)
                    return
                case .processed(let count):
                    incoming.withUnsafeReadableBytes { bytes in
                        for (index, byte) in bytes.enumerated()
                        where byte != patternByte(result.received + index, seed: seed) {
                            result.mismatches += 1
                        }
                    }
                    result.received += count
                    if halfClosed { result.receivedAfterHalfClose += count }
                    incoming.clear()
                }
            }
        } catch {
            end(error)
        }
    }

    func hangup() {
        // A refused connect reports writable first (finishConnect throws there); this is the rest.
        end(SystemError("hangup", errno: ECONNRESET))
    }

    private func end(_ error: SystemError?) {
        result.error = error
        try? loop.deregister(socket.descriptor)
        socket.close()
        done(result)
    }
}
