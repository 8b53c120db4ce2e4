import EventLoop
import ProxyCore
import SystemIO

/// The socket work of a connection: opening and dropping the upstream connection,
/// writing the machine's output, keeping epoll interest and the timer in step with what
/// the machine wants, and closing everything once.
extension ConnectionHandler {
    func openUpstream(_ endpoint: Endpoint) {
        dropUpstream()
        do {
            let connection = try Socket.connect(to: SocketAddress(endpoint))
            let end = UpstreamEnd(handler: self, socket: connection)
            try owner.loop.register(connection.descriptor, interest: .write, handler: end)
            upstream = end
        } catch {
            deliver { $0.connectFailed($1) }
        }
    }

    func dropUpstream() {
        guard let upstream else { return }
        self.upstream = nil
        owner.loop.forget(upstream.socket.descriptor)  // closed next: no epoll_ctl needed
        upstream.socket.close()
    }

    /// Writes what the machine has for either side, then watches what it wants.
    func sync() {
        guard !closed else { return }
        // A tunnel may be shed at the total cap, as idle as its bytes say.
        if let relay { return slot.markIdle(since: relay.lastActivity) }
        if machine.isSheddable { slot.markSheddable(since: owner.loop.clock.now()) } else { slot.markBusy() }
        var movedToClient = false
        if machine.clientOut.readableBytes > 0 {
            guard let written = try? socket.write(from: &machine.clientOut) else { return teardown() }
            if case .processed(let count) = written, count > 0 { movedToClient = true }
            if machine.clientOut.readableBytes == 0 { machine.clientOut.clear() }
        }
        clientStall.note(waiting: machine.clientOut.readableBytes > 0, moved: movedToClient) { owner.loop.clock.now() }
        if case .closing = machine.state, machine.clientOut.readableBytes == 0, !clientWriteShut {
            clientWriteShut = true
            try? socket.shutdown(.write)
        }
        if let upstream, !upstream.connecting {
            if machine.upstreamOut.readableBytes > 0 {
                if (try? upstream.socket.write(from: &machine.upstreamOut)) == nil {
                    dropUpstream()
                    return deliver { $0.upstreamClosed($1) }
                }
                if machine.upstreamOut.readableBytes == 0 { machine.upstreamOut.clear() }
            }
            var interest: Interest = machine.wantsUpstreamBytes || upstream.eagerRead ? .read : .none
            if machine.upstreamOut.readableBytes > 0 { interest.insert(.write) }
            if interest != upstream.interest {
                upstream.interest = interest
                try? owner.loop.setInterest(interest, for: upstream.socket.descriptor)
            }
        }
        var interest: Interest = machine.wantsClientBytes || clientEagerRead ? .read : .none
        if machine.clientOut.readableBytes > 0 { interest.insert(.write) }
        if interest != clientInterest {
            clientInterest = interest
            try? owner.loop.setInterest(interest, for: socket.descriptor)
        }
        if machine.deadline != timerDeadline {
            cancelTimer()
            if let deadline = machine.deadline {
                timer = owner.loop.scheduleTimer(at: deadline, target: self)
                timerDeadline = deadline
            }
        }
    }

    func cancelTimer() {
        if let timer { _ = owner.loop.cancelTimer(timer) }
        timer = nil
        timerDeadline = nil
    }

    /// Closes everything and tells the loop. Idempotent. `reset`: both connections end
    /// with a reset, dropping what the kernel still queues for them (and the relay's pipes
    /// go with their bytes), so nothing more reaches the client.
    func teardown(reset: Bool = false) {
        guard !closed else { return }
        closed = true
        cancelTimer()
        if reset {
            try? socket.resetOnClose()
            try? upstream?.socket.resetOnClose()
        }
        if let relay {
            relay.stop()
            self.relay = nil
            owner.metrics.tunnelsOpen.add(-1)
        }
        dropUpstream()
        owner.loop.forget(socket.descriptor)
        socket.close()
        owner.connectionClosed(self)
    }

    /// One read: nil when the connection failed.
    func readSocket(_ from: Socket, into buffer: inout ByteBuffer) -> IOResult? {
        try? from.read(into: &buffer, maxBytes: ProxyLimits.readChunk, through: owner.loop.readScratch)
    }
}
