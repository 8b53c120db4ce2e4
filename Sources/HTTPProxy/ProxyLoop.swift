import CSystem
import DNSProxy
import DomainMatch
import EventLoop
import Glibc
import Policy
import ProxyCore
import Synchronization
import SystemIO
import Zoneinfo

/// The HTTP proxy on one event loop (the loops it shares with the DNS proxy): its
/// listeners, its connections, the connections re-decided every second (`followed`),
/// a spare-pipe pool, and this loop's copy of the snapshot and settings (read without a
/// lock). Loop-confined except `openConnections`; one per loop, made on the loop thread.
public final class ProxyLoop: TimerTarget, @unchecked Sendable {
    // Sendable: every member but the atomic is touched only on `loop`'s thread.
    public let loop: EventLoop
    let resolver: ProxyResolver
    /// Failed proxy logins per client address, shared by every loop.
    let authLimiter: AuthFailureLimiter
    /// Where proxy logins are checked (scrypt), shared by every loop.
    let loginWorker: LoginWorker
    /// Counts for `/metrics`, shared by every loop.
    public let metrics: ProxyMetrics
    /// Connections whose login is being checked, by ticket: kept until the outcome comes
    /// back, so it reaches the connection that asked and no other.
    private var awaitingLogin: [UInt64: ConnectionHandler] = [:]
    private var nextLoginTicket: UInt64 = 0
    let hits: any HitRecorder
    /// Open connections per device and in all, shared by every loop.
    let caps: ProxyCaps
    let log: Logger
    public private(set) var snapshot: ProxySnapshot
    /// What connections decide with, taken from `snapshot` once per snapshot.
    private var decisions: DecisionSnapshot
    /// The policy zone's wall clock for this loop's events, read from the zone once per
    /// offset change.
    private(set) var clock = ZoneClock()
    public private(set) var settings: ProxySettings
    private var connections: [ObjectIdentifier: ConnectionHandler] = [:]
    var followed = FollowedConnections<ConnectionHandler>()
    let relayBuffers = RelayBuffers()
    private var servers: [ProxyServer] = []
    private var ticking = false
    private var draining = false
    /// Connections open on this loop; any thread (the daemon waits for them when draining).
    public let openConnections = Atomic<Int>(0)
    /// A round of re-deciding every open tunnel starts once a second.
    static let tickInterval: Nanoseconds = 1_000_000_000
    /// A round goes by batches of this many connections, `sweepGap` apart: a few tens of
    /// microseconds of the loop at a time, and 16,000 connections a second.
    static let sweepBatch = 32
    static let sweepGap: Nanoseconds = 2_000_000
    private var roundStarted: Nanoseconds = 0
    /// The most connections open on this loop since memory was last handed back.
    private var peakSinceTrim = 0
    /// A burst's trim left connections open: trimmed again when they are gone.
    private var burstTail = false
    /// Connections closed in a burst (this many fewer open than the peak) before the
    /// allocator is asked to hand freed memory back.
    static let trimAfter = 64
    private var sweepTimer: TimerHandle?

    /// - Parameters:
    ///   - driver: this loop's DNS query driver: the proxy resolves through it (same cache,
    ///     snapshot and upstream client as the DNS proxy's, no hop), typed, never deciding a
    ///     host twice.
    public init(
        loop: EventLoop, driver: QueryDriver, snapshot: ProxySnapshot,
        settings: ProxySettings, hits: any HitRecorder, caps: ProxyCaps,
        authLimiter: AuthFailureLimiter = AuthFailureLimiter(), loginWorker: LoginWorker = LoginWorker(),
        metrics: ProxyMetrics = ProxyMetrics(), log: Logger
    ) {
        self.loop = loop
        self.metrics = metrics
        self.authLimiter = authLimiter
        self.loginWorker = loginWorker
        resolver = ProxyResolver(driver: driver)
        self.snapshot = snapshot
        decisions = Self.decisions(from: snapshot)
        self.settings = settings
        self.hits = hits
        self.caps = caps
        self.log = log
    }

    /// Listens on `address` (loop thread): for proxy clients, or with `transparent` for
    /// connections the firewall redirected; returns the bound address.
    @discardableResult
    public func listen(on address: SocketAddress, transparent: Bool = false) throws(SystemError) -> SocketAddress {
        let server = try ProxyServer(address: address, transparent: transparent, owner: self)
        servers.append(server)
        if !ticking {
            ticking = true
            roundStarted = loop.clock.now() &+ Self.tickInterval
            sweepTimer = loop.scheduleTimer(at: roundStarted, target: self)
        }
        return server.address
    }

    /// A new snapshot or new settings (loop thread): open connections are re-decided at once.
    public func update(snapshot: ProxySnapshot, settings: ProxySettings) {
        self.snapshot = snapshot
        decisions = Self.decisions(from: snapshot)
        self.settings = settings
        startRound()
    }

    /// SIGTERM (loop thread): no new connections; idle keep-alive ones close now, the
    /// others when they next fall idle (the daemon stops the loops after 5 s at most).
    public func stopAccepting() {
        draining = true
        for server in servers { server.close() }
        servers.removeAll()
        closeIdle()
    }

    /// Checks `login` for `handler` off this thread; the outcome is delivered to it here.
    func checkLogin(_ login: LoginCheck, for handler: ConnectionHandler) {
        nextLoginTicket &+= 1
        let ticket = nextLoginTicket
        awaitingLogin[ticket] = handler
        guard login.delay == 0 else {
            // The user's turn: the connection waits on this loop's timer, and no scrypt runs
            // for one that has gone meanwhile.
            _ = loop.scheduleTimer(after: login.delay) { [self] in
                guard let waiting = awaitingLogin[ticket] else { return }
                guard !waiting.closed else {
                    awaitingLogin[ticket] = nil
                    return
                }
                awaitingLogin[ticket] = nil
                checkLogin(login.atOnce, for: waiting)
            }
            return
        }
        loginWorker.check(login, answerOn: loop) { [self] outcome in
            // Back on the loop thread.
            guard let handler = awaitingLogin.removeValue(forKey: ticket) else { return }
            handler.deliver { $0.loginChecked(outcome, $1) }
        }
    }

    /// What a connection decides with, now.
    func environment() -> ProxyEnvironment {
        let wallClock = loop.clock.wall().unixSeconds
        return ProxyEnvironment(
            snapshot: decisions, settings: settings, now: loop.clock.now(), wallClock: wallClock,
            local: clock.localDateTime(at: wallClock, in: decisions.engine.zone), authLimiter: authLimiter)
    }

    private static func decisions(from snapshot: ProxySnapshot) -> DecisionSnapshot {
        DecisionSnapshot(engine: snapshot.engine)
    }

    /// A new connection: counted against the caps first (a device over its cap gets 429,
    /// and when everyone together is at the total cap the oldest connection that has not
    /// asked for anything yet is shed), then `allow_clients` (403). On the transparent
    /// listener, where the client expects no proxy to answer, refusals close without a word.
    func accept(_ socket: Socket, from server: ProxyServer) {
        guard let peer = socket.address?.ipAddress else { return socket.close() }
        metrics.connections.add()
        if server.transparent, !snapshot.allowClients.contains(peer) { return socket.close() }
        let now = loop.clock.now()
        // The neighbour table is read for the caps whatever the profiles list; the MAC
        // chooses a profile only when one is chosen by it.
        let neighbourMAC = resolver.driver.neighbourMAC(for: peer)
        let mac = snapshot.engine.profiles.usesMACs ? neighbourMAC : nil
        let slot: CapSlot<ProxyClientKey>
        let device = ProxyClientKey(peer, mac: neighbourMAC)
        // A device known by its MAC address is also counted by its address: an address that
        // shows another MAC address now and then gets no more than one device's share.
        let address = neighbourMAC.map { _ in ProxyClientKey.address(peer.unmapped) }
        switch caps.admit(device, alsoCountedAs: address, on: loop, now: now) {
        case .success(let admitted): slot = admitted
        case .failure(let refusal):
            if !server.transparent {
                // Said once, without waiting: holding this socket would defeat the cap.
                var answer = ByteBuffer()
                if refusal == .perClient {
                    ProxyResponse.error(429, "too many connections from \(peer)", to: &answer)
                } else {
                    ProxyResponse.error(503, "the proxy is at its connection limit", to: &answer)
                }
                _ = try? socket.write(from: &answer)
            }
            return socket.close()
        }
        // What the kernel holds for a device that stops reading is bounded (docs/proxy.md#stalled-devices).
        try? socket.setSendBuffer(ProxyLimits.clientSendBuffer)
        let arrivedOn = Endpoint(server.isWildcard ? ((try? socket.localAddress()) ?? server.address) : server.address)
        let machine: ProxyConnection
        if !snapshot.allowClients.contains(peer) {
            machine = .refused(
                client: peer, arrivedOn: arrivedOn, status: 403,
                message: "client \(peer) may not use this proxy", now: now)
        } else if server.transparent {
            // Not redirected (conntrack has no entry: someone connected to the listener
            // itself), or redirected to the listener's own address (a loop): nothing to serve.
            let local = try? socket.localAddress()
            guard let original = socket.originalDestination(), let destination = original.ipAddress,
                destination != local?.ipAddress || original.port != local?.port
            else {
                caps.release(slot)
                return socket.close()
            }
            var connection = ProxyConnection.redirected(
                client: peer, arrivedOn: arrivedOn, destination: Endpoint(destination, port: original.port), now: now)
            connection.clientMAC = mac
            connection.deviceMAC = neighbourMAC
            machine = connection
        } else {
            var connection = ProxyConnection(client: peer, arrivedOn: arrivedOn, now: now)
            connection.clientMAC = mac
            connection.deviceMAC = neighbourMAC
            machine = connection
        }
        do {
            let handler = try ConnectionHandler(owner: self, socket: socket, machine: machine, slot: slot)
            slot.attach(handler)
            connections[ObjectIdentifier(handler)] = handler
            openConnections.add(1, ordering: .relaxed)
            handler.start()
        } catch {
            caps.release(slot)
            socket.close()
        }
    }

    /// Called once by each handler when it has closed its sockets.
    func connectionClosed(_ handler: ConnectionHandler) {
        peakSinceTrim = max(peakSinceTrim, connections.count)
        guard connections.removeValue(forKey: ObjectIdentifier(handler)) != nil else { return }
        followed.remove(handler)
        caps.release(handler.slot)
        openConnections.subtract(1, ordering: .relaxed)
    }

    public func timerFired(tag: UInt64) {
        sweepTimer = nil
        sweep()
    }

    /// A new round at once (a new snapshot): its first batch now, the rest `sweepGap` apart.
    private func startRound() {
        guard ticking else { return }
        if let sweepTimer { _ = loop.cancelTimer(sweepTimer) }
        sweepTimer = nil
        followed.startRound()
        roundStarted = loop.clock.now()
        sweep()
    }

    /// One batch of the round; the next batch, or the next round a second after this one
    /// began.
    private func sweep() {
        for handler in followed.nextBatch(limit: Self.sweepBatch) { handler.tick() }
        let now = loop.clock.now()
        var next = now &+ Self.sweepGap
        if followed.roundFinished {
            if draining { closeIdle() }
            trimIfMany()
            followed.startRound()
            roundStarted = max(roundStarted &+ Self.tickInterval, now)
            next = roundStarted
        }
        sweepTimer = loop.scheduleTimer(at: next, target: self)
    }

    /// After many connections have closed, glibc's malloc keeps what they freed in its
    /// arenas, which the process never gets back on its own (the thresholds that return
    /// memory grow with the largest blocks freed): `malloc_trim` hands the free pages back.
    /// At most once a round, and only after a burst of closes, so it costs nothing in a
    /// steady state (docs/proxy.md#stalled-devices); once more when the rest of the burst
    /// has closed too, or the last connections of a burst that closes over several
    /// seconds keep what they freed.
    private func trimIfMany() {
        let open = connections.count
        if peakSinceTrim >= open + Self.trimAfter {
            peakSinceTrim = open
            burstTail = open > 0
            _ = malloc_trim(0)
            return
        }
        peakSinceTrim = max(peakSinceTrim, open)
        if burstTail, open == 0 {
            burstTail = false
            _ = malloc_trim(0)
        }
    }

    private func closeIdle() {
        for handler in connections.values where handler.machine.isIdle { handler.teardown() }
    }
}

/// Whose connections count together against `proxy_max_conns_per_client` and for the fair
/// choice at `proxy_max_conns` (docs/proxy.md#who-is-served): a device by its MAC address
/// whenever the neighbour table knows it (its IPv4 address and IPv6 privacy addresses are
/// one device), else its address, an IPv6 address by its /64 (a host given a whole /64
/// picks any address in it at will).
public enum ProxyClientKey: Hashable, Sendable {
    case device(MACAddress)
    case address(IPAddress)

    public init(_ address: IPAddress, mac: MACAddress?) {
        if let mac {
            self = .device(mac)
            return
        }
        switch address.unmapped {
        case .v4(let bits): self = .address(.v4(bits))
        case .v6(let high, _): self = .address(.v6(high: high, low: 0))
        }
    }
}

public typealias ProxyCaps = ConnectionCaps<ProxyClientKey>

extension ProxySettings {
    /// The caps these settings ask for: a device over its cap is refused (429), the total
    /// sheds.
    public var capLimits: ProxyCaps.Limits {
        ProxyCaps.Limits(perClient: maxConnectionsPerClient, total: maxConnections, shedAtClientCap: false)
    }
}
