import CSystem
import Glibc
import SystemIO

/// UDP: a server socket bound to an address (one per loop thread with `reusePort`), or a
/// client socket connected to one upstream so the kernel drops datagrams from anyone else.
extension Socket {
    /// A UDP socket bound to `address` (port 0: the OS chooses; read it from `address`).
    /// - Parameters:
    ///   - reusePort: SO_REUSEPORT, so each loop thread can bind its own socket to the same
    ///     port and the kernel spreads datagrams by source. Every socket on the port needs it.
    ///   - ipv6Only: for an IPv6 address, refuse IPv4-mapped traffic (the IPv4 address is
    ///     served by a socket of its own).
    /// - Throws: `SystemError` from socket/setsockopt/bind, e.g. EADDRINUSE, subject the address.
    public static func udp(
        bindingTo address: SocketAddress, reusePort: Bool = false, ipv6Only: Bool = true
    )
        throws(SystemError) -> Socket
    {
        let descriptor = try make(family: address.family, type: CS_SOCK_DGRAM, subject: address)
        let socket = Socket(descriptor: descriptor, address: address)  // closes it if we throw
        try configureForBinding(
            descriptor, address: address, reuseAddress: false, reusePort: reusePort, ipv6Only: ipv6Only)
        return try socket.rebound()
    }

    /// A UDP socket on an OS-chosen (random) local port, connected to `peer`: `send(_:)` goes
    /// there and the kernel only delivers datagrams whose source is `peer`.
    public static func udp(connectedTo peer: SocketAddress) throws(SystemError) -> Socket {
        let descriptor = try make(family: peer.family, type: CS_SOCK_DGRAM, subject: peer)
        let socket = Socket(descriptor: descriptor, address: peer)
        _ = try peer.withSockAddr { pointer, length throws(SystemError) in
            try systemCall("connect", subject: peer.description) { Glibc.connect(descriptor, pointer, length) }
        }
        return socket
    }

    /// Receives as many queued datagrams as `batch` has slots, with one recvmmsg.
    /// - Returns: how many (also in `batch.count`); 0 when none was queued (EAGAIN).
    public func receive(into batch: DatagramBatch) throws(SystemError) -> Int {
        let descriptor = descriptor
        let received = try nonBlockingCall("recvmmsg", subject: subject) {
            cs_recvmmsg(descriptor, batch.slots, UInt32(batch.slotCount))
        }
        batch.count = Int(received ?? 0)
        return batch.count
    }

    /// Sends `batch`'s slots from `start` with one sendmmsg.
    /// - Returns: how many were sent, in order; fewer than offered (0 on EAGAIN) means the
    ///   socket buffer is full: send the rest, from `start + sent`, when it is writable.
    public func send(_ batch: DatagramBatch, from start: Int = 0) throws(SystemError) -> Int {
        guard start < batch.count else { return 0 }
        let descriptor = descriptor
        let sent = try nonBlockingCall("sendmmsg", subject: subject) {
            cs_sendmmsg(descriptor, batch.slots + start, UInt32(batch.count - start))
        }
        return Int(sent ?? 0)
    }

    /// Sends one datagram to `peer`. `.processed(count)` or `.wouldBlock`.
    public func send(_ bytes: UnsafeRawBufferPointer, to peer: SocketAddress) throws(SystemError) -> IOResult {
        let descriptor = descriptor
        let sent = try peer.withSockAddr { pointer, length throws(SystemError) in
            try nonBlockingCall("sendto", subject: peer.description) {
                sendto(descriptor, bytes.baseAddress, bytes.count, CS_MSG_NOSIGNAL, pointer, length)
            }
        }
        return sent.map { .processed($0) } ?? .wouldBlock
    }

    /// Sends one datagram on a connected socket. ECONNREFUSED here or on `receive` means
    /// an earlier datagram drew an ICMP port-unreachable from the peer.
    public func send(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> IOResult {
        let descriptor = descriptor
        let sent = try nonBlockingCall("send", subject: subject) {
            Glibc.send(descriptor, bytes.baseAddress, bytes.count, CS_MSG_NOSIGNAL)
        }
        return sent.map { .processed($0) } ?? .wouldBlock
    }

    /// Receives one datagram, appended to `buffer` (cut at `maxBytes`), and its source.
    /// - Returns: nil when none was queued (EAGAIN).
    public func receive(into buffer: inout ByteBuffer, maxBytes: Int = 65_535) throws(SystemError) -> SocketAddress? {
        var raw = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let descriptor = descriptor
        var received: Int?
        try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: maxBytes) { space throws(SystemError) in
            received = try withUnsafeMutablePointer(to: &raw) { pointer throws(SystemError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                    try nonBlockingCall("recvfrom", subject: subject) {
                        recvfrom(descriptor, space.baseAddress, min(space.count, maxBytes), 0, address, &length)
                    }
                }
            }
            return received ?? 0
        }
        guard received != nil else { return nil }
        return SocketAddress(raw, length: length) ?? address
    }
}
