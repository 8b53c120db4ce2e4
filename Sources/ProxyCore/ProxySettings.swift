import DomainMatch

/// The proxy's configuration keys (docs/proxy.md), typed. Built by `Gateway` from the
/// configuration on start and on every `SIGHUP`, and handed to each loop with the
/// snapshot; immutable, swapped whole. Durations are nanoseconds (of the loop's monotonic
/// clock, which ProxyCore never reads itself: time comes in with each event).
public struct ProxySettings: Sendable, Equatable {
    /// `connect_ports`: the ports CONNECT may reach.
    public var connectPorts: Set<UInt16>
    /// `allow_ip_connect`: CONNECT (and plain HTTP) to IP literals outside a cutoff.
    public var allowIPConnect: Bool
    /// `connect_timeout`: from the start of the lookup to an open upstream connection.
    public var connectTimeout: UInt64
    /// `tunnel_idle`: a tunnel with no bytes either way for this long is closed.
    public var tunnelIdle: UInt64
    /// `stall_timeout`: a tunnel or plain-HTTP exchange whose device has taken none of the
    /// bytes waiting for it for this long is aborted.
    public var stallTimeout: UInt64 = 60_000_000_000
    /// `proxy_max_conns_per_client`; 0 = no limit.
    public var maxConnectionsPerClient: Int
    /// `proxy_max_conns`: connections of all clients together; 0 = no limit.
    public var maxConnections: Int = 4096
    /// `http_ports`: the ports a plain-HTTP request may reach.
    public var httpPorts: Set<UInt16> = [80, 8080]
    /// `allow_local_destinations` (for tests): loopback, unspecified and link-local
    /// addresses, and the gateway's own, may be reached.
    public var allowLocalDestinations = false
    /// The gateway's own addresses (every interface's), refused as destinations.
    public var ownAddresses: Set<IPAddress> = []
    /// `rebind_allow` with the `local_forward` zones: names whose answers may reach
    /// private-use addresses (a LAN's own names); any other name's may not.
    public var rebindAllow = DomainSuffixes.localNames
    /// `transparent_destination`: where a redirected connection whose name was allowed goes.
    public var transparentDestination: TransparentDestination = .connect
    /// `gateway_name` (or the host name): shown on the block page.
    public var gatewayName: String
    /// The child's page (`http://gate.home.arpa`), where a block page and a 403 send a child
    /// to ask; nil when it does not listen.
    public var childPage: String?
    /// Where the proxy takes a request for the child's page (`home_name`): the one address
    /// of the gateway's own it reaches, with who asks added to the request, since the page
    /// cannot see a proxy user (docs/requests-and-notifications.md#the-childs-page).
    public var childPageRoute: ChildPageRoute?
    /// `proxy_auth`: whether a proxy client no device entry covers must log in.
    public var authMode: ProxyAuthMode = .optional
    /// The profiles' proxy users and their passwords; nil when no profile has one.
    public var logins: ProxyLogins?

    public init(
        connectPorts: Set<UInt16> = [443], allowIPConnect: Bool = false,
        connectTimeout: UInt64 = 10_000_000_000, tunnelIdle: UInt64 = 300_000_000_000,
        maxConnectionsPerClient: Int = 256, gatewayName: String = "phosra-gate"
    ) {
        self.connectPorts = connectPorts
        self.allowIPConnect = allowIPConnect
        self.connectTimeout = connectTimeout
        self.tunnelIdle = tunnelIdle
        self.maxConnectionsPerClient = maxConnectionsPerClient
        self.gatewayName = gatewayName
    }
}

/// Limits that are not configuration: docs/proxy.md#bad-input-and-limits fixes them, and every buffer the
/// proxy keeps is bounded by one of them (nothing a client sends grows memory further).
public enum ProxyLimits {
    /// A request or response header block longer than this is refused (431 / 502).
    public static let headerBytes = 16_384
    /// A request head must be complete this long after the connection was accepted.
    public static let headTimeout: UInt64 = 10_000_000_000
    /// Between keep-alive requests the connection may sit idle this long; once the next
    /// request's first byte arrives, `headTimeout` applies.
    public static let keepAliveIdle: UInt64 = 60_000_000_000
    /// The SNI check buffers at most this much of the client's first bytes…
    public static let inspectBytes = 16_384
    /// …for at most this long (docs/proxy.md#the-sni-check).
    public static let inspectTimeout: UInt64 = 2_000_000_000
    /// After the last response of a connection, unread input is discarded for at most this
    /// long before the socket is closed, so the client reads the response rather than a reset.
    public static let lingerTimeout: UInt64 = 2_000_000_000
    /// Plain HTTP: reading from one side pauses while this much waits to be written to the other.
    public static let highWater = 65_536
    /// One read from a socket.
    public static let readChunk = 16_384
    /// SO_SNDBUF of every socket toward a device: what the kernel holds for one that does
    /// not read is bounded (left to itself it grows a send buffer to 4 MiB). 256 KiB of data
    /// keeps a LAN link full up to 10 ms of round trip at 200 Mbit/s.
    public static let clientSendBuffer = 262_144
}

/// The child's page as the proxy reaches it: `host` (`home_name`) on `port`, served at
/// `address`.
public struct ChildPageRoute: Sendable, Equatable {
    public var host: DomainName
    public var port: UInt16
    public var address: IPAddress

    public init(host: DomainName, port: UInt16, address: IPAddress) {
        self.host = host
        self.port = port
        self.address = address
    }
}
