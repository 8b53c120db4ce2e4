import DomainMatch
import EventLoop
import SystemIO

/// The limits of DNS over TCP (docs/dns.md#dns-over-tcp): how long a connection may sit
/// idle and how long one message may take to arrive; the connection caps are the shared
/// `ConnectionCaps`.
public struct TCPLimits: Sendable {
    /// `tcp_idle`: no complete query and no answer for this long closes the connection.
    public var idle: Nanoseconds
    /// `tcp_read_timeout`: a message must arrive whole this long after its first byte.
    public var messageTimeout: Nanoseconds

    public init(idle: Nanoseconds, messageTimeout: Nanoseconds) {
        self.idle = idle
        self.messageTimeout = messageTimeout
    }
}

/// DNS over TCP on one address (RFC 7766), one listener per loop thread
/// (`SO_REUSEPORT`). Each accepted connection stays on the loop that accepted it.
public final class TCPServer: Selectable {
    public let socket: Socket
    private let driver: QueryDriver
    private let limits: TCPLimits
    private let caps: ConnectionCaps<IPAddress>
    private let log: Logger

    public init(
        address: SocketAddress, driver: QueryDriver, limits: TCPLimits, caps: ConnectionCaps<IPAddress>, log: Logger
    ) throws(SystemError) {
        socket = try Socket.listen(on: address, backlog: 512, reusePort: true)
        // Set on the listener, so that every connection it accepts can say where it came from.
        if driver.arrivalFilter != nil { try socket.reportArrivalInterface() }
        self.driver = driver
        self.limits = limits
        self.caps = caps
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
            if let filter = driver.arrivalFilter,
                !filter.admits(connection.arrivalInterface(), on: .dnsTCP, now: driver.loop.clock.now())
            {
                // Off the LAN (docs/dns.md#who-is-answered): a reset, and nothing read.
                try? connection.resetOnClose()
                connection.close()
                continue
            }
            guard let peer = connection.address?.ipAddress,
                case .success(let slot) = caps.admit(peer, on: driver.loop, now: driver.loop.clock.now())
            else {
                connection.close()
                continue
            }
            do {
                let handler = try TCPConnection(
                    socket: connection, client: peer, driver: driver, limits: limits, slot: slot, caps: caps)
                slot.attach(handler)
            } catch {
                caps.release(slot)
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
/// (pipelined, possibly out of order, RFC 7766 §6.2.1.1). Closed when the client closes,
/// after `tcp_idle` without a complete query or an answer, when a message is not whole
/// `tcp_read_timeout` after its first byte (bytes trickled one at a time do not extend
/// it), on a message that cannot be a query (zero length, an unreadable header, a
/// response), and when the caps shed it. Loop-confined; kept alive by its registration.
final class TCPConnection: Selectable, TimerTarget, Sheddable {
    private let socket: Socket
    private let client: IPAddress
    private let driver: QueryDriver
    private let limits: TCPLimits
    private let slot: CapSlot<IPAddress>
    private let caps: ConnectionCaps<IPAddress>
    private var input = ByteBuffer()
    private var output = ByteBuffer()
    /// The timer and the instant it is set for; it may fire early (then it is set again
    /// for the current deadline), so moving the deadline later costs nothing per query.
    private var timer: TimerHandle?
    private var timerAt: Nanoseconds = .max
    /// The last complete query, answer queued or answer bytes written.
    private var lastActivity: Nanoseconds
    /// When the first byte of the message still incomplete in `input` arrived.
    private var messageStart: Nanoseconds?
    private var pending = 0
    private var peerClosed = false
    private var closed = false
    /// Inside `processInput`: answers that come at once (cached, blocked) only queue.
    private var processing = false
    /// Queries in flight on one connection; beyond it reading pauses (bounded memory).
    static let maxPending = 128
    /// Answers waiting for a client that does not read; beyond it reading pauses.
    static let outputHighWater = 65_536

    init(
        socket: Socket, client: IPAddress, driver: QueryDriver, limits: TCPLimits, slot: CapSlot<IPAddress>,
        caps: ConnectionCaps<IPAddress>
    ) throws(SystemError) {
        self.socket = socket
        self.client = client
        self.driver = driver
        self.limits = limits
        self.slot = slot
        self.caps = caps
        lastActivity = driver.loop.clock.now()
        try driver.loop.register(socket.descriptor, interest: .read, handler: self)
        armTimer()
    }

    private var deadline: Nanoseconds {
        if let messageStart { return messageStart &+ limits.messageTimeout }
        return lastActivity &+ limits.idle
    }

    /// Sets the timer when the deadline is earlier than the one it is set for.
    private func armTimer() {
        let due = deadline
        guard due < timerAt else { return }
        if let timer { _ = driver.loop.cancelTimer(timer) }
        timer = driver.loop.scheduleTimer(at: due, target: self)
        timerAt = due
    }

    func timerFired(tag: UInt64) {
        timer = nil
        timerAt = .max
        guard driver.loop.clock.now() < deadline else { return close() }
        armTimer()
    }

    func shed() { close() }

    func readable() {
        let result: IOResult
        do {
            result = try socket.read(into: &input, maxBytes: 65_537, through: driver.loop.readScratch)
        } catch {
            close()
            return
        }
        switch result {
        case .wouldBlock: return
        case .eof:
            peerClosed = true
            if pending == 0 && output.readableBytes == 0 { return close() }
            updateInterest()
            return
        case .processed: processInput()
        }
    }

    /// Starts every complete query in `input` there is room for.
    private func processInput() {
        guard !processing else { return }
        processing = true
        defer { processing = false }
        let now = driver.loop.clock.now()
        var took = false
        while pending < Self.maxPending, output.readableBytes < Self.outputHighWater,
            let length = input.getInteger(at: input.readerIndex, as: UInt16.self)
        {
            // Nothing that short is a query, and nothing can be answered to it; nothing that
            // long is one the gateway takes, and it is refused from its length prefix, before
            // its bytes are kept.
            guard length >= 12, Int(length) <= QueryDriver.maxQueryBytes else { return close() }
            guard input.readableBytes >= 2 + Int(length) else { break }
            input.moveReaderIndex(forwardBy: 2)
            guard let packet = input.readBytes(length: Int(length)) else { break }
            took = true
            pending += 1
            slot.markBusy()
            driver.handle(
                packet, from: client, overUDP: false, dropped: { [weak self] in self?.close() },
                send: { [weak self] answer in self?.queue(answer) })
            if closed { return }
        }
        input.discardReadBytes()
        if took {
            lastActivity = now
            messageStart = nil
        }
        if input.readableBytes > 0 && messageStart == nil && !holdsWholeMessage { messageStart = now }
        armTimer()
        updateIdleness(now)
        updateInterest()
    }

    /// Whether `input` begins with a complete message (waiting for room to be taken).
    private var holdsWholeMessage: Bool {
        guard let length = input.getInteger(at: input.readerIndex, as: UInt16.self) else { return false }
        return input.readableBytes >= 2 + Int(length)
    }

    private func queue(_ answer: [UInt8]) {
        pending = max(0, pending - 1)
        guard !closed else { return }
        output.writeInteger(UInt16(min(answer.count, 65_535)))
        output.writeBytes(answer.prefix(65_535))
        lastActivity = driver.loop.clock.now()
        writable()
    }

    func writable() {
        var wrote = false
        while output.readableBytes > 0 {
            guard let result = try? socket.write(from: &output) else {
                close()
                return
            }
            if case .wouldBlock = result { break }
            wrote = true
        }
        output.discardReadBytes()
        let now = driver.loop.clock.now()
        if wrote { lastActivity = now }
        if peerClosed, pending == 0, output.readableBytes == 0 {
            close()
            return
        }
        updateIdleness(now)
        // Reading paused at the high-water mark; complete messages may be waiting.
        if !processing, !peerClosed, holdsWholeMessage, output.readableBytes < Self.outputHighWater,
            pending < Self.maxPending
        {
            return processInput()
        }
        updateInterest()
    }

    /// Sheddable while nothing is owed to the client: no query in flight, no answer unsent.
    private func updateIdleness(_ now: Nanoseconds) {
        if pending == 0 && output.readableBytes == 0 { slot.markSheddable(since: now) } else { slot.markBusy() }
    }

    private func updateInterest() {
        guard !closed else { return }
        var interest: Interest =
            peerClosed || pending >= Self.maxPending || output.readableBytes >= Self.outputHighWater ? .none : .read
        if output.readableBytes > 0 { interest.insert(.write) }
        try? driver.loop.setInterest(interest, for: socket.descriptor)
    }

    func hangup() { close() }

    private func close() {
        guard !closed else { return }
        closed = true
        if let timer { _ = driver.loop.cancelTimer(timer) }
        timer = nil
        driver.loop.forget(socket.descriptor)  // closed next: no epoll_ctl needed
        socket.close()
        caps.release(slot)
    }
}
