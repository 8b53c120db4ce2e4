import DomainMatch
import EventLoop
import Glibc
import ProxyCore
import SystemIO

/// The socket side of one client connection: reads into the state machine's buffers,
/// tells it what happened, carries out its actions (lookup, connect, relay, record,
/// close), writes its output and keeps the loop watching what it wants. All decisions
/// are `ProxyConnection`'s; this type only does I/O. Loop-confined.
final class ConnectionHandler: Selectable, TimerTarget, Sheddable {
    typealias Event = (inout ProxyConnection, ProxyEnvironment) -> [ProxyAction]

    /// Strong, not `unowned`: an unowned reference is a checked retain at every use (a few
    /// dozen a tunnel). The loop lets go of the handler in `connectionClosed`.
    let owner: ProxyLoop
    let socket: Socket
    var machine: ProxyConnection
    /// This connection's place in the caps.
    let slot: CapSlot<ProxyClientKey>
    var upstream: UpstreamEnd?
    var relay: TunnelRelay?
    var timer: TimerHandle?
    var timerDeadline: Nanoseconds?
    var clientInterest: Interest = .read
    /// Read interest is kept on the client while the machine wants no bytes (it connects,
    /// it waits on the origin), until bytes it did not want arrive: a client that waits for
    /// the `200` then costs no epoll_ctl to stop and start watching it. A client that sends
    /// early is reported once, and from then on watched only when the machine wants bytes.
    var clientEagerRead = true
    var clientWriteShut = false
    /// Plain HTTP: bytes of `machine.clientOut` the device does not take (`stall_timeout`);
    /// a tunnel's relay keeps its own.
    var clientStall = StallWatch()
    var closed = false
    /// Events that arrive while one is being handled (a cached lookup answers at once)
    /// wait for it to finish, so actions are carried out in order.
    private var busy = false
    private var deferred: [Event] = []

    init(
        owner: ProxyLoop, socket: Socket, machine: ProxyConnection, slot: CapSlot<ProxyClientKey>
    )
        throws(SystemError)
    {
        self.owner = owner
        self.socket = socket
        self.machine = machine
        self.slot = slot
        // TCP_NODELAY is the listener's (`ProxyServer`): an accepted socket inherits it.
        try owner.loop.register(socket.descriptor, interest: .read, handler: self)
    }

    /// Writes what the machine already has (a refusal) and arms its deadline; called once
    /// the loop has counted the connection.
    func start() {
        sync()
    }

    // MARK: Client socket

    func readable() {
        if relay != nil { return relayStep(.readable(.client)) }
        guard machine.wantsClientBytes else {
            clientEagerRead = false
            return sync()
        }
        switch readSocket(socket, into: &machine.clientIn) {
        case .processed: deliver { $0.clientInput($1) }
        case .eof: deliver { $0.clientClosed($1) }
        case .wouldBlock: break
        case nil: teardown()
        }
    }

    func writable() {
        if relay != nil { return relayStep(.writable(.client)) }
        sync()
    }

    func hangup() {
        if relay != nil { return relayStep(.hangup(.client)) }
        teardown()  // the client is gone (or reset): nothing more can reach it
    }

    // MARK: Upstream socket (through `UpstreamEnd`)

    func upstreamReadable() {
        if relay != nil { return relayStep(.readable(.upstream)) }
        guard let upstream else { return }
        guard machine.wantsUpstreamBytes else {
            upstream.eagerRead = false
            return sync()
        }
        switch readSocket(upstream.socket, into: &machine.upstreamIn) {
        case .processed: deliver { $0.upstreamInput($1) }
        case .eof, nil:
            dropUpstream()
            deliver { $0.upstreamClosed($1) }
        case .wouldBlock: break
        }
    }

    func upstreamWritable() {
        if relay != nil { return relayStep(.writable(.upstream)) }
        guard let upstream else { return }
        guard upstream.connecting else { return sync() }
        do {
            try upstream.socket.finishConnect()
            upstream.connecting = false
            try? upstream.socket.setNoDelay()
            deliver { $0.connected($1) }
        } catch {
            dropUpstream()
            deliver { $0.connectFailed($1) }
        }
    }

    func upstreamHangup() {
        if relay != nil { return relayStep(.hangup(.upstream)) }
        guard let upstream else { return }
        let connecting = upstream.connecting
        dropUpstream()
        deliver(connecting ? { $0.connectFailed($1) } : { $0.upstreamClosed($1) })
    }

    /// The total cap was reached and this is the connection that has waited longest
    /// without asking for anything.
    func shed() {
        owner.metrics.shed.add()
        teardown()
    }

    // MARK: Timer and tick

    func timerFired(tag: UInt64) {
        timer = nil
        timerDeadline = nil
        deliver { $0.deadlinePassed($1) }
    }

    /// The loop's once-a-second pass over open connections (docs/proxy.md#open-connections-follow-the-policy).
    func tick() {
        let lastActivity = relay?.lastActivity ?? owner.loop.clock.now()
        let stalledSince = relay.map { $0.deviceStall.since } ?? clientStall.since
        let moved = relay?.moved ?? 0
        deliver { $0.tick($1, lastActivity: lastActivity, deviceStalledSince: stalledSince, movedBytes: moved) }
    }

    // MARK: Carrying out

    func deliver(_ event: @escaping Event) {
        guard !closed else { return }
        if busy { return deferred.append(event) }
        busy = true
        var next: Event? = event
        while let current = next, !closed {
            perform(current(&machine, owner.environment()))
            next = deferred.isEmpty ? nil : deferred.removeFirst()
        }
        deferred.removeAll()
        busy = false
        sync()
    }

    private func perform(_ actions: [ProxyAction]) {
        for action in actions where !closed {
            switch action {
            case .lookup(let query):
                // Held strongly: the resolver calls back exactly once, and `deliver` ignores
                // a connection closed meanwhile. A weak capture would give every connection
                // that looks a name up a side table, which each retain then goes through.
                owner.resolver.lookup(query, client: machine.client) { result in
                    self.deliver { $0.lookupFinished(result, $1) }
                }
            case .checkLogin(let login): owner.checkLogin(login, for: self)
            case .connect(let address):
                // From its first origin on, the connection's exchanges and tunnel are
                // re-decided every second (docs/proxy.md#open-connections-follow-the-policy).
                owner.followed.insert(self)
                openUpstream(address)
            case .dropUpstream: dropUpstream()
            case .relay: startRelay()
            case .record(let hit): owner.hits.record(hit)
            case .close: teardown()
            case .abort: teardown(reset: true)
            }
        }
    }
}
