import DNSWire
import DomainMatch
import EventLoop
import SystemIO
import TLS

/// Forwards questions to the configured upstream resolvers, exactly as docs/dns.md#forwarding says:
/// upstreams in order, each within `timeout`, all within `totalBudget`; SERVFAIL and
/// REFUSED fail over; plain UDP (retried over TCP when truncated), `tcp://`, and
/// DNS-over-TLS with verified certificates and pipelined, reused connections.
///
/// Threading and ownership: bound to one `EventLoop` (make one client per loop thread).
/// It may be created on any thread; from then on `resolve`, `shutdown` and `onEvent` are
/// used on the loop's thread only (debug builds assert it), which is why it can be handed
/// over as `@unchecked Sendable`. Completions and events run on that thread too. Call
/// `shutdown()` before releasing it: pending resolutions and open sockets hold it.
public final class UpstreamClient: @unchecked Sendable {
    public let loop: EventLoop
    public let upstreams: [UpstreamSpec]
    public let timeout: Nanoseconds
    public let totalBudget: Nanoseconds
    /// Resolutions in flight at most; more are answered nil at once (bounded memory).
    public let maxInFlight: Int
    /// How long a TCP/TLS connection with nothing in flight is kept for reuse.
    public let idleTimeout: Nanoseconds
    let tls: TLSContext?
    /// Told about failure bursts and recoveries (see `UpstreamEvent`); loop thread.
    public var onEvent: ((UpstreamEvent) -> Void)?
    /// Latency and failures per upstream, when someone reads them.
    public var metrics: UpstreamMetrics?

    var active: [UInt64: Resolution] = [:]
    let datagramBuffer = ReceiveBuffer()
    private var nextSerial: UInt64 = 0
    private var connections: [StreamKey: StreamConnection] = [:]
    /// Failed attempts per upstream since it last answered: a burst is logged once.
    private var failing: [UpstreamSpec: Int] = [:]
    private var isShutDown = false
    /// TCP/TLS connections started (connects, including reconnects); for tests and metrics.
    public internal(set) var streamConnectsStarted = 0

    /// - Parameters:
    ///   - tls: the verifying context for `tls://` upstreams; nil makes one on the system
    ///     store when some configured upstream needs it.
    /// - Throws: `TLSError.configuration` when that default context cannot be made.
    public init(
        loop: EventLoop, upstreams: [UpstreamSpec], timeout: Nanoseconds = 800_000_000,
        totalBudget: Nanoseconds = 2_000_000_000, tls: TLSContext? = nil, maxInFlight: Int = 4096,
        idleTimeout: Nanoseconds = 10_000_000_000
    ) throws(TLSError) {
        self.loop = loop
        self.upstreams = upstreams
        self.timeout = timeout
        self.totalBudget = totalBudget
        self.maxInFlight = maxInFlight
        self.idleTimeout = idleTimeout
        if tls == nil, upstreams.contains(where: { $0.transport == .tls }) {
            self.tls = try TLSContext()
        } else {
            self.tls = tls
        }
    }

    /// Asks the upstreams `question`. Loop thread. `completion` runs exactly once, on the
    /// loop thread and never before `resolve` returns: with the first acceptable reply's
    /// bytes (its ID is the upstream query's, not the client's), or nil when every
    /// upstream failed, the budget ran out, too many resolutions were in flight, or the
    /// client was shut down.
    /// - Parameter upstreams: instead of the configured list (e.g. a `local_forward` server).
    public func resolve(
        _ question: DNSQuestion, dnssecOK: Bool, checkingDisabled: Bool, upstreams override: [UpstreamSpec]? = nil,
        completion: @escaping ([UInt8]?) -> Void
    ) {
        loop.assertInLoop()
        let list = override ?? upstreams
        guard !isShutDown, active.count < maxInFlight, !list.isEmpty else {
            // Deferred, so a caller never sees its completion run inside its own call.
            loop.scheduleTimer(after: 0) { completion(nil) }
            return
        }
        nextSerial &+= 1
        let query = UpstreamQuery(question: question, dnssecOK: dnssecOK, checkingDisabled: checkingDisabled)
        let resolution = Resolution(
            client: self, serial: nextSerial, query: query, upstreams: list,
            deadline: loop.clock.now() &+ totalBudget, completion: completion)
        active[nextSerial] = resolution
        resolution.start()
    }

    /// Resolutions in flight now.
    public var inFlight: Int { active.count }

    /// TCP/TLS connections with a socket open now (connecting or up).
    public var openStreamConnections: Int { connections.values.count { $0.socket != nil } }

    /// Completes every pending resolution with nil (their completions run inside this
    /// call) and closes every socket, TLS with close_notify. Loop thread; later `resolve`
    /// calls complete with nil.
    public func shutdown() {
        loop.assertInLoop()
        isShutDown = true
        for resolution in Array(active.values) { resolution.abandon() }
        for connection in connections.values { connection.close() }
        connections.removeAll()
    }

    // MARK: For resolutions

    /// The pooled connection for a TCP or TLS upstream (made on first use, then reused).
    func connection(for key: StreamKey) -> StreamConnection {
        if let existing = connections[key] { return existing }
        let made = StreamConnection(key: key, client: self)
        connections[key] = made
        return made
    }

    func resolutionEnded(_ serial: UInt64) {
        active.removeValue(forKey: serial)
    }

    func noteFailure(of upstream: UpstreamSpec, _ error: UpstreamError) {
        metrics?.errors.add([upstream.description])
        let count = failing[upstream, default: 0]
        failing[upstream] = count + 1
        if count == 0 { onEvent?(.failed(upstream, error)) }
    }

    func noteAnswer(from upstream: UpstreamSpec, after nanoseconds: UInt64) {
        metrics?.latency.histogram(upstream.description).observe(nanoseconds: nanoseconds)
        guard let count = failing.removeValue(forKey: upstream) else { return }
        onEvent?(.recovered(upstream, failures: count))
    }
}
