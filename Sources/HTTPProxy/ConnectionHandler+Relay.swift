import EventLoop

/// The tunnel's relay (docs/proxy.md#connect, after the SNI check): handed the sockets and whatever
/// bytes the machine still held, it runs until both directions have closed.
extension ConnectionHandler {
    func startRelay() {
        guard let upstream else { return teardown() }
        let relay = TunnelRelay(
            loop: owner.loop, buffers: owner.relayBuffers, client: socket, upstream: upstream.socket,
            toUpstream: machine.upstreamOut, toClient: machine.clientOut, bytes: owner.metrics.tunnelBytes)
        // The buffers' bytes now belong to the relay; the connection keeps no buffer.
        machine.upstreamOut = ByteBuffer(capacity: 0)
        machine.clientOut = ByteBuffer(capacity: 0)
        machine.clientIn = ByteBuffer(capacity: 0)
        self.relay = relay
        owner.metrics.tunnels.add()
        owner.metrics.tunnelsOpen.add(1)
        cancelTimer()
        owner.followed.insert(self)
        relayStep(.start)
    }

    enum RelayEvent {
        case start
        case readable(TunnelRelay.Side)
        case writable(TunnelRelay.Side)
        case hangup(TunnelRelay.Side)
    }

    /// Runs a relay step; an error or the end of both directions ends the connection.
    func relayStep(_ event: RelayEvent) {
        guard let relay else { return }
        do {
            switch event {
            case .start: try relay.start()
            case .readable(let side): try relay.readable(side)
            case .writable(let side): try relay.writable(side)
            case .hangup(let side): try relay.hangup(side)
            }
            if relay.isFinished {
                machine.relayEnded()
                teardown()
            } else {
                slot.markIdle(since: relay.lastActivity)
            }
        } catch {
            machine.relayEnded()
            teardown()
        }
    }
}
