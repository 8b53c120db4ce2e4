import EventLoop
import SystemIO

/// One listening address of the HTTP proxy on one loop (`SO_REUSEPORT`: every loop has
/// its own socket on the address and the kernel spreads connections; each stays on the
/// loop that accepted it). Loop-confined.
final class ProxyServer: Selectable {
    let socket: Socket
    /// The bound address (with the port the OS chose for port 0).
    let address: SocketAddress
    /// Bound to 0.0.0.0 or ::: the address a connection arrived on must be asked for.
    let isWildcard: Bool
    /// The transparent listener: connections the firewall redirected here
    /// (docs/network.md#transparent-mode), not proxy clients.
    let transparent: Bool
    /// Strong (see `ConnectionHandler.owner`); the loop drops its servers in `stopAccepting`.
    let owner: ProxyLoop

    init(address: SocketAddress, transparent: Bool = false, owner: ProxyLoop) throws(SystemError) {
        self.transparent = transparent
        socket = try Socket.listen(on: address, backlog: 1024, reusePort: true)
        // Set once here, not on each connection: Linux gives an accepted socket the
        // listener's TCP_NODELAY (a system call a tunnel saved; TCPTests holds it).
        try? socket.setNoDelay()
        // Set on the listener, so that every connection it accepts can say where it came from.
        if owner.resolver.driver.arrivalFilter != nil { try socket.reportArrivalInterface() }
        self.address = socket.address ?? address
        isWildcard = address.ipv4Bits == 0 || (address.ipv6Bits.map { $0.high == 0 && $0.low == 0 } ?? false)
        self.owner = owner
        try owner.loop.register(socket.descriptor, interest: .read, handler: self)
    }

    func readable() {
        // A bounded number per wake-up, so one busy listener cannot starve the loop.
        for _ in 0..<64 {
            let accepted: Socket?
            do { accepted = try socket.accept() } catch {
                owner.log.warn("proxy_accept_failed", [("error", error.description)])
                return
            }
            guard let connection = accepted else { return }
            if let filter = owner.resolver.driver.arrivalFilter,
                !filter.admits(
                    connection.arrivalInterface(), on: transparent ? .transparent : .proxy,
                    now: owner.loop.clock.now())
            {
                // Off the LAN (docs/proxy.md#who-is-served): a reset, before the caps or a
                // byte is read.
                try? connection.resetOnClose()
                connection.close()
                continue
            }
            owner.accept(connection, from: self)
        }
    }

    func writable() {}

    func hangup() {}

    func close() {
        try? owner.loop.deregister(socket.descriptor)
        socket.close()
    }
}
