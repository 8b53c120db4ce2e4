import DomainMatch
import EventLoop
import SystemIO

/// DNS over UDP on one address, one per loop thread (`SO_REUSEPORT`): a batch of
/// datagrams per wake-up, answers sent with the next batch or at once when they come
/// from an upstream. Loop-confined.
public final class UDPServer: Selectable {
    public let socket: Socket
    private let driver: QueryDriver
    private let received = DatagramBatch(slots: 64, slotSize: QueryDriver.maxQueryBytes)
    private let replies = DatagramBatch(slots: 64, slotSize: 4096)
    private var draining = false
    private let log: Logger

    public init(address: SocketAddress, driver: QueryDriver, log: Logger) throws(SystemError) {
        socket = try Socket.udp(bindingTo: address, reusePort: true)
        // Only then does each datagram bring its interface: without `lan_interfaces` none is read.
        if driver.arrivalFilter != nil { try socket.reportArrivalInterface() }
        self.driver = driver
        self.log = log
        try driver.loop.register(socket.descriptor, interest: .read, handler: self)
    }

    public func readable() {
        let count: Int
        do { count = try socket.receive(into: received) } catch {
            log.warn("udp_receive_failed", [("error", error.description)])
            return
        }
        inBatch = true
        let filter = driver.arrivalFilter
        let now = filter == nil ? 0 : driver.loop.clock.now()
        for index in 0..<count {
            // Off the LAN: dropped without a word, whatever the source address says
            // (docs/dns.md#who-is-answered).
            if let filter, !filter.admits(received.arrivalInterface(at: index), on: .dnsUDP, now: now) { continue }
            // A datagram cut by the slot size is not a whole query: dropped (docs/dns.md#hostile-input).
            guard !received.isTruncated(at: index), let source = received.address(at: index),
                let client = source.ipAddress
            else { continue }
            driver.handle(
                datagram: received.bytes(at: index), from: client,
                place: { answer in replies.append(to: source) { answer.write(into: $0) } },
                sender: { { [weak self] answer in self?.send(answer, to: source) } })
        }
        inBatch = false
        flush()
    }

    /// While a received batch is handled, answers made on the spot are collected and sent
    /// with one `sendmmsg`; answers that come later (from an upstream) go out at once.
    private var inBatch = false

    private func send(_ answer: [UInt8], to peer: SocketAddress) {
        if inBatch, answer.withUnsafeBytes({ replies.append($0, to: peer) }) { return }
        _ = try? answer.withUnsafeBytes { try socket.send($0, to: peer) }
    }

    private func flush() {
        var start = 0
        while start < replies.count {
            let sent = (try? socket.send(replies, from: start)) ?? 0
            // A full socket buffer drops the rest, as a busy resolver's UDP does.
            if sent == 0 { break }
            start += sent
        }
        replies.removeAll()
    }

    public func writable() {}

    public func hangup() {}

    /// Stops reading new queries; answers to queries in flight still go out.
    public func stopReading() {
        guard !draining else { return }
        draining = true
        try? driver.loop.setInterest(.none, for: socket.descriptor)
    }

    public func close() {
        try? driver.loop.deregister(socket.descriptor)
        socket.close()
    }
}

extension SocketAddress {
    /// The address as the policy sees clients.
    public var ipAddress: IPAddress? {
        if let bits = ipv4Bits { return .v4(bits) }
        if let bits = ipv6Bits { return .v6(high: bits.high, low: bits.low) }
        return nil
    }
}
