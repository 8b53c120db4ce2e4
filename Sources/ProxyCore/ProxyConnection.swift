import Bytes
import DomainMatch
import HTTP1
import Policy

/// What the socket code must do for a connection.
public enum ProxyAction: Equatable, Sendable {
    /// Resolve through the gateway's resolver; answer with `lookupFinished`.
    case lookup(HostQuery)
    /// Check proxy credentials off the loop thread (scrypt takes tens of milliseconds);
    /// answer with `loginChecked`.
    case checkLogin(LoginCheck)
    /// Open a connection to the origin (closing any the connection had); answer with
    /// `connected` or `connectFailed`.
    case connect(Endpoint)
    /// Close the upstream connection.
    case dropUpstream
    /// From now on relay both ways with splice(2): first write what is in the output
    /// buffers, then move bytes until both sides have closed.
    case relay
    /// Record a block (docs/sync.md#hits).
    case record(Hit)
    /// Close both sockets now.
    case close
    /// Close both sockets now with a reset: what is still buffered for the client (in the
    /// proxy or the kernel) is dropped, not delivered. For a connection the policy ends.
    case abort
}

/// One client connection of the HTTP proxy as a state machine that does no I/O
/// (docs/ARCHITECTURE.md#house-habits (7)): the driver (`ConnectionHandler`) reads into `clientIn`/`upstreamIn`, tells it
/// what happened, carries out the actions that come back, writes `clientOut`/`upstreamOut`
/// and watches for what `wantsClientBytes`/`wantsUpstreamBytes`/`deadline` say. Time comes
/// in with every event (`ProxyEnvironment`), so tests drive it by hand.
///
/// The life of a connection: `readingHead` → (`authenticating`, when a proxy login must
/// be checked) → for CONNECT `resolving` → `connecting` →
/// `inspecting` (the SNI check) → `relaying` (splice, outside this type); for a proxy
/// request `resolving` → `connecting` → `exchanging` → `readingHead` again (keep-alive);
/// any refusal or error → `closing` (the response is flushed, late input discarded) → `closed`.
public struct ProxyConnection: Sendable {
    public enum State: Equatable, Sendable {
        case readingHead
        case authenticating(PendingLogin)
        case resolving(Pending)
        case connecting(Pending)
        case inspecting(Tunnel)
        case relaying(Tunnel)
        case exchanging(Exchange)
        case closing
        case closed
    }

    public let client: IPAddress
    /// The device's link-layer address, when the neighbour table knew it at accept time:
    /// the profile is chosen by it before the address.
    public var clientMAC: MACAddress?
    /// The device's link-layer address when the neighbour table knew it at accept time,
    /// whether or not a profile is chosen by it: the login limits know a device by it,
    /// and `status` lists it by it, as for DNS.
    public var deviceMAC: MACAddress?
    /// The proxy user whose credentials this request (and, for a tunnel, the connection)
    /// carried and proved: the profile is chosen by it first.
    public var proxyUser: String?
    /// Where the client reached the proxy (the PAC file names it).
    public let arrivedOn: Endpoint
    /// For a connection the firewall redirected to the transparent listener, where it was
    /// going (docs/network.md#transparent-mode).
    public internal(set) var redirectedTo: Endpoint?
    public internal(set) var state: State = .readingHead
    /// When `deadlinePassed` is due, if ever (monotonic nanoseconds, as `ProxyEnvironment.now`).
    public internal(set) var deadline: UInt64?

    /// Bytes read from the client and not yet used; the driver appends, this type consumes.
    public var clientIn = ByteBuffer(capacity: 0)
    /// Bytes read from the origin (plain HTTP only).
    public var upstreamIn = ByteBuffer(capacity: 0)
    /// Bytes to write to the client / the origin; the driver consumes.
    public var clientOut = ByteBuffer(capacity: 0)
    public var upstreamOut = ByteBuffer(capacity: 0)

    /// The plain-HTTP origin the upstream socket is connected to, when one is open.
    var upstream: Origin?
    /// The search for the end of the next request head in `clientIn` (relative to the
    /// reader index, which survives compaction), and its 16 KiB limit.
    var headScanner = HeadScanner(limit: ProxyLimits.headerBytes)
    /// Waiting between keep-alive requests (the idle limit applies until a byte arrives).
    var betweenRequests = false
    /// A tunnel's bytes in the current minute, for the minutes online.
    var onlineMeter = OnlineMeter()

    public init(client: IPAddress, arrivedOn: Endpoint, now: UInt64) {
        self.client = client
        self.arrivedOn = arrivedOn
        deadline = now &+ ProxyLimits.headTimeout
    }

    /// A connection refused as soon as it is accepted (a client outside `allow_clients`,
    /// or one over `proxy_max_conns_per_client`): the response, then the lingering close.
    public static func refused(
        client: IPAddress, arrivedOn: Endpoint, status: Int, message: String,
        now: UInt64
    ) -> ProxyConnection {
        var connection = ProxyConnection(client: client, arrivedOn: arrivedOn, now: now)
        ProxyResponse.error(status, message, to: &connection.clientOut)
        connection.state = .closing
        connection.deadline = now &+ ProxyLimits.lingerTimeout
        return connection
    }

    // MARK: What the driver watches

    public var wantsClientBytes: Bool {
        switch state {
        case .readingHead: clientIn.readableBytes <= ProxyLimits.headerBytes
        case .inspecting: clientIn.readableBytes < ProxyLimits.inspectBytes
        case .exchanging(let exchange):
            !exchange.requestBody.isComplete && upstreamOut.readableBytes < ProxyLimits.highWater
        case .closing: true
        case .authenticating, .resolving, .connecting, .relaying, .closed: false
        }
    }

    public var wantsUpstreamBytes: Bool {
        switch state {
        case .exchanging(let exchange): !exchange.responseDone && clientOut.readableBytes < ProxyLimits.highWater
        case .readingHead: upstream != nil  // an idle keep-alive connection: notice when the origin closes it
        default: false
        }
    }

    /// A tunnel (inspected or relayed): the loop's registry re-decides it every second.
    public var tunnel: Tunnel? {
        switch state {
        case .inspecting(let tunnel), .relaying(let tunnel): tunnel
        default: nil
        }
    }

    /// Nothing is in progress: a keep-alive connection waiting for its next request (what
    /// a draining daemon may close at once).
    public var isIdle: Bool {
        if case .readingHead = state { return clientIn.readableBytes == 0 }
        return false
    }

    /// Nothing has been asked of the origin: the connection reads (or waits for) a request
    /// head, or lingers after its last response. What the proxy sheds first at its
    /// connection cap (docs/proxy.md#bad-input-and-limits).
    public var isSheddable: Bool {
        switch state {
        case .readingHead, .closing, .closed: true
        default: false
        }
    }

    // MARK: Events

    /// The timer reached `deadline`.
    public mutating func deadlinePassed(_ env: ProxyEnvironment) -> [ProxyAction] {
        guard let deadline, env.now >= deadline else { return [] }
        self.deadline = nil
        switch state {
        case .readingHead, .exchanging, .closing, .closed:
            // docs/proxy.md#bad-input-and-limits: a head not complete in 10 s closes the connection; so does an idle
            // keep-alive connection, an exchange without progress, or a lingering close.
            return close()
        case .authenticating:
            return fail(503, "the proxy login could not be checked in time", env)
        case .resolving, .connecting:
            return fail(504, "no connection to the origin within the connect timeout", env)
        case .inspecting(let tunnel):
            // 2 s without a complete ClientHello.
            return unreadable(tunnel, env.policy(for: client, mac: clientMAC, user: proxyUser), env)
        case .relaying:
            return []
        }
    }

    /// The relay has finished (both sides closed, or an error): the connection is over.
    public mutating func relayEnded() {
        state = .closed
        deadline = nil
    }

    /// Closes at once (a client that went away, a failure mid-stream).
    mutating func close() -> [ProxyAction] {
        state = .closed
        deadline = nil
        upstream = nil
        return [.close]
    }

    /// Ends at once with a reset, so nothing already buffered reaches the client: the
    /// policy no longer lets this connection's bytes through.
    mutating func abort() -> [ProxyAction] {
        _ = close()
        return [.abort]
    }

    /// Ends after the response already in `clientOut`: the driver flushes it and shuts
    /// down writing, later input is read and discarded until the client closes or the
    /// linger time passes, so the client sees the response and not a reset.
    mutating func closeAfterResponse(_ env: ProxyEnvironment) -> [ProxyAction] {
        state = .closing
        deadline = env.now &+ ProxyLimits.lingerTimeout
        clientIn.clear()
        upstreamIn.clear()
        upstreamOut.clear()
        guard upstream != nil else { return [] }
        upstream = nil
        return [.dropUpstream]
    }

    /// A failure the client is told about, then the connection ends.
    mutating func fail(_ status: Int, _ message: String, _ env: ProxyEnvironment) -> [ProxyAction] {
        ProxyResponse.error(status, message, to: &clientOut)
        let actions = closeAfterResponse(env)
        return actions.contains(.dropUpstream) ? actions : [.dropUpstream] + actions
    }
}
