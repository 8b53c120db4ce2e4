import EventLoop
import Glibc
import SystemIO

/// One query over UDP to one upstream: a new socket on a kernel-chosen ephemeral port
/// (connect(2) binds it; Linux picks the port at random), connected to the upstream so
/// the kernel delivers only datagrams from that address and port, and reports an ICMP
/// port unreachable as ECONNREFUSED — a dead upstream fails at once instead of at its
/// timeout. Every datagram is still checked (source, ID, question; `UpstreamQuery`) and
/// one that does not match is dropped while the attempt keeps waiting.
///
/// Loop thread only. The loop holds the attempt while it is registered; `close()` (by the
/// resolution, on any outcome) deregisters it and closes the socket.
final class UDPAttempt: Selectable {
    private let loop: EventLoop
    private let socket: Socket
    private let peer: SocketAddress
    private let query: UpstreamQuery
    private let id: UInt16
    private let token: UInt64
    private weak var owner: (any AttemptOwner)?
    private let scratch: ReceiveBuffer

    /// Opens the socket, sends the query and starts listening.
    /// - Throws: the socket, connect or send failure (the resolution moves on).
    init(
        loop: EventLoop, peer: SocketAddress, query: UpstreamQuery, scratch: ReceiveBuffer, owner: any AttemptOwner,
        token: UInt64
    ) throws(SystemError) {
        self.loop = loop
        self.scratch = scratch
        self.peer = peer
        self.query = query
        self.owner = owner
        self.token = token
        id = UpstreamQuery.randomID()
        socket = try Socket.udp(connectedTo: peer)
        let message = query.message(id: id)
        var failure: SystemError?
        let sent: IOResult? = message.withUnsafeBytes { bytes in
            do throws(SystemError) { return try socket.send(bytes) } catch {
                failure = error
                return nil
            }
        }
        if let failure { throw failure }
        // A fresh socket's send buffer is empty; not taking one datagram means trouble.
        guard sent == .processed(message.count) else {
            throw SystemError("send", errno: EAGAIN, subject: peer.description)
        }
        try loop.register(socket.descriptor, interest: .read, handler: self)
    }

    func close() {
        guard socket.isOpen else { return }
        loop.forget(socket.descriptor)  // closed next: no epoll_ctl needed
        socket.close()
    }

    func readable() {
        do {
            // Bounded: a flood of forged datagrams cannot keep the loop here.
            for _ in 0..<16 {
                scratch.bytes.clear()
                guard let source = try socket.receive(into: &scratch.bytes, maxBytes: 65_535) else { return }
                guard source == peer, let reply = scratch.bytes.readBytes(length: scratch.bytes.readableBytes) else {
                    continue
                }
                let verdict = query.verdict(on: reply, id: id)
                if case .mismatch = verdict { continue }
                owner?.attemptReplied(reply, verdict: verdict, token: token)
                return
            }
        } catch {
            owner?.attemptFailed(.network(error), token: token)
        }
    }

    func writable() {}

    /// EPOLLERR: an ICMP error is pending; reading it ends the attempt.
    func hangup() {
        let code = (try? socket.option(level: SOL_SOCKET, name: SO_ERROR)) ?? ECONNRESET
        owner?.attemptFailed(
            .network(SystemError("recv", errno: code == 0 ? ECONNRESET : code, subject: peer.description)),
            token: token)
    }
}

/// One datagram-sized receive buffer per client, shared by its UDP attempts (they read
/// one at a time on the loop's thread), so an attempt allocates no 64 KiB of its own.
final class ReceiveBuffer {
    var bytes = ByteBuffer(capacity: 65_535)
}
