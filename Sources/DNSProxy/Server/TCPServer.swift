import DomainMatch
import EventLoop
import SystemIO

/// DNS over TCP on one address (RFC 7766), one listener per loop thread
/// (`SO_REUSEPORT`). Each accepted connection stays on the loop that accepted it.
public final class TCPServer: Selectable {
    public let socket: Socket
    private let driver: QueryDriver
    private let idleTimeout: Nanoseconds
    private let log: Logger
    /// Open connections on this listener; beyond `maxConnections` new ones are closed at once.
    var connections: Set<ObjectIdentifier> = []
    let maxConnections = 2048

    public init(address: SocketAddress, driver: QueryDriver, idleTimeout: Nanoseconds, log: Logger) throws(SystemError)
    {
        socket = try Socket.listen(on: address, backlog: 512, reusePort: true)
        self.driver = driver
        self.idleTimeout = idleTimeout
        self.log = log
        try driver.loop.register(socket.descriptor, interest: .read, handler: self)
    }

    public func readable() {
        // A bounded number per wake-up, so one busy listener cannot starve the loop.
        for _ in 0..<64 {
            let accepted: Socket?
            do { accepted = try socket.accept() } catch {
                log.warn("tcp_accept_failed", [("error", error.description)])
                return
            }
            guard let connection = accepted else { return }
            guard connections.count < maxConnections, let peer = connection.address?.ipAddress else {
                connection.close()
                continue
            }
            do {
                let handler = try TCPConnection(
                    socket: connection, client: peer, driver: driver, idleTimeout: idleTimeout,
                    server: self)
                connections.insert(ObjectIdentifier(handler))
            } catch {
                connection.close()
            }
        }
    }

    public func writable() {}

    public func hangup() {}

    /// Stops accepting; open connections finish what they were asked.
    public func close() {
        try? driver.loop.deregister(socket.descriptor)
        socket.close()
    }
}

/// One client connection: length-prefixed queries in, answers out as they complete
/// (pipelined, possibly out of order, RFC 7766 §6.2.1.1), closed after `tcp_idle`
/// without traffic or when the client closes. Loop-confined.
final class TCPConnection: Selectable, TimerTarget {
    private let socket: Socket
    private let client: IPAddress
    private let driver: QueryDriver
    private let idleTimeout: Nanoseconds
    private weak var server: TCPServer?
    private var input = ByteBuffer()
    private var output = ByteBuffer()
    private var idleTimer: TimerHandle?
    private var pending = 0
    private var peerClosed = false
    private var closed = false
    /// Queries in flight on one connection; beyond it reading pauses (bounded memory).
    static let maxPending = 128

    init(
        socket: Socket, client: IPAddress, driver: QueryDriver, idleTimeout: Nanoseconds, server: TCPServer
    ) throws(SystemError) {
        self.socket = socket
        self.client = client
        self.driver = driver
        self.idleTimeout = idleTimeout
        self.server = server
        try driver.loop.register(socket.descriptor, interest: .read, handler: self)
        armIdleTimer()
    }

    private func armIdleTimer() {
        if let idleTimer { _ = driver.loop.cancelTimer(idleTimer) }
        idleTimer = driver.loop.scheduleTimer(at: driver.loop.clock.now() + idleTimeout, target: self)
    }

    func timerFired(tag: UInt64) {
        idleTimer = nil
        close()
    }

    func readable() {
        let result: IOResult
        do { result = try socket.read(into: &input, maxBytes: 65_537) } catch {
            close()
            return
        }
        switch result {
        case .wouldBlock: return
        case .eof:
            peerClosed = true
            try? driver.loop.setInterest(output.readableBytes > 0 ? .write : .none, for: socket.descriptor)
            if pending == 0 && output.readableBytes == 0 { close() }
            return
        case .processed:
            armIdleTimer()
        }
        while pending < Self.maxPending, let length = input.getInteger(at: input.readerIndex, as: UInt16.self),
            input.readableBytes >= 2 + Int(length)
        {
            input.moveReaderIndex(forwardBy: 2)
            guard let packet = input.readBytes(length: Int(length)) else { break }
            pending += 1
            driver.handle(packet, from: client, overUDP: false) { [weak self] answer in self?.queue(answer) }
        }
        // A message may be 65,535 bytes; past that the stream is garbage.
        if input.readableBytes > 65_537 + 2 { close() }
        input.discardReadBytes()
        updateInterest()
    }

    /// Queries that never produce an answer (dropped) still count down.
    private func queue(_ answer: [UInt8]) {
        pending = max(0, pending - 1)
        guard !closed else { return }
        output.writeInteger(UInt16(min(answer.count, 65_535)))
        output.writeBytes(answer.prefix(65_535))
        writable()
    }

    func writable() {
        while output.readableBytes > 0 {
            guard let result = try? socket.write(from: &output) else {
                close()
                return
            }
            if case .wouldBlock = result { break }
        }
        output.discardReadBytes()
        if peerClosed, pending == 0, output.readableBytes == 0 {
            close()
            return
        }
        updateInterest()
    }

    private func updateInterest() {
        guard !closed else { return }
        var interest: Interest = peerClosed || pending >= Self.maxPending ? .none : .read
        if output.readableBytes > 0 { interest.insert(.write) }
        try? driver.loop.setInterest(interest, for: socket.descriptor)
    }

    func hangup() { close() }

    private func close() {
        guard !closed else { return }
        closed = true
        if let idleTimer { _ = driver.loop.cancelTimer(idleTimer) }
        try? driver.loop.deregister(socket.descriptor)
        socket.close()
        server?.connections.remove(ObjectIdentifier(self))
    }
}
