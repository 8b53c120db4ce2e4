import Bytes
import DomainMatch
import HTTP1
import Policy

/// The plain-HTTP origin an upstream connection goes to: reused for the next request
/// only when that one goes to the same place (docs/proxy.md#plain-http keep-alive).
public struct Origin: Equatable, Sendable, CustomStringConvertible {
    public enum Destination: Equatable, Sendable {
        /// Resolved through the gateway's resolver: the host, or a rewrite's target.
        case name(DomainName)
        /// An IP literal that may be reached.
        case address(IPAddress)
        /// The gateway's own child's page: the one local address reached, never looked up.
        case childPage(IPAddress)
    }

    public let destination: Destination
    public let port: UInt16
    /// `transparent_destination = verify`: the address a redirected connection dialled,
    /// which must be among the answers for the name and is then the only one connected to.
    public var dialled: IPAddress? = nil

    public var description: String {
        switch destination {
        case .name(let name): "\(name):\(port)"
        case .address(let address), .childPage(let address): Endpoint(address, port: port).description
        }
    }
}

/// What a connection waits for while it resolves and connects.
public struct Pending: Equatable, Sendable {
    public enum Purpose: Equatable, Sendable {
        case tunnel(Tunnel)
        case forward(Exchange)
    }

    public var purpose: Purpose
    public let origin: Origin
    /// The profile the target was decided for (the one chosen by the client's MAC,
    /// address or proxy user, from the snapshot of that moment), and whether the lookup
    /// inspects the answer's CNAME chain: what the resolver needs so that it never decides
    /// or chooses again.
    public let profile: Profile
    public var inspect = true
    /// The addresses to try, in order (filled by the lookup), and the one being tried.
    public var addresses: [Endpoint] = []
    public var next = 0

    /// The lookup of `name` for this connection; a dialled IPv6 address to verify is
    /// looked for among the AAAA answers first.
    func query(_ name: DomainName, inspect: Bool) -> HostQuery {
        let preferIPv6 = if case .v6? = origin.dialled?.unmapped { true } else { false }
        return HostQuery(name: name, profile: profile, inspect: inspect, preferIPv6: preferIPv6)
    }
}

/// What the proxy asks the gateway's resolver (docs/proxy.md#connect): a host already
/// decided once, for one profile. The resolver does not decide it again; it inspects the
/// answer's CNAME chain unless `inspect` is false (a parent-allowed or system name, an
/// unfiltered profile).
public struct HostQuery: Equatable, Sendable {
    public let name: DomainName
    public let profile: Profile
    public let inspect: Bool
    /// Ask AAAA first (then A when it gives none): the address to verify is an IPv6 one.
    public let preferIPv6: Bool

    public init(name: DomainName, profile: Profile, inspect: Bool, preferIPv6: Bool = false) {
        self.name = name
        self.profile = profile
        self.inspect = inspect
        self.preferIPv6 = preferIPv6
    }
}

/// One plain-HTTP request and its response in flight (RFC 9112): the request's body
/// still to pass to the origin, then the response's head and body to pass back.
public struct Exchange: Equatable, Sendable {
    public enum Response: Equatable, Sendable {
        /// Waiting for (more of) a response head; 1xx heads are passed on as they come.
        case head
        case body(BodyTracker)
        case done
    }

    public let method: String
    /// What the request asked for: the loop re-decides it while the exchange is open.
    public let target: ProxyTarget
    /// The host and URL as the client asked for them (for a block page after the lookup).
    public let site: String
    public let url: String
    /// The rewritten head, kept until sent (and for one retry when a reused connection
    /// turns out closed before any answer).
    public var head: ByteBuffer
    public var requestBody: BodyTracker
    public var response: Response = .head
    public var clientKeepAlive: Bool
    /// The client spoke HTTP/1.0: it cannot read a chunked response (RFC 9112 §7.1).
    public let clientIsHTTP10: Bool
    /// The response is chunked and the client is HTTP/1.0: pass the chunks' content
    /// only, and end it by closing.
    public var dechunk = false
    public var upstreamKeepAlive = true
    public let origin: Origin
    /// Sent on a connection reused from an earlier exchange (may be retried once).
    public var reusedConnection = false
    /// Request bodies cannot be replayed, so only a request without one is retried.
    public let retryable: Bool
    /// The profile the host was decided for and whether its lookup inspects the CNAME
    /// chain (`HostQuery`), kept for a retry.
    public let profile: Profile
    public var inspect = true

    public var responseDone: Bool { response == .done }

    /// Why this exchange may no longer go on under `policy` (docs/proxy.md#open-connections-follow-the-policy),
    /// as a tunnel is judged: its host is now refused (the block is the host's reason), or
    /// now rewritten somewhere its origin is not (no hit: a rewrite is not a block).
    public func judge(_ policy: TargetPolicy) -> TunnelJudgement {
        switch policy.verdict(target, isConnect: false) {
        case .refuse(let block):
            return .close(hit: (target.host.description, block.decision))
        case .resolve(let name, let decision) where decision.action == .rewrite:
            return origin.destination == .name(name) ? .keep : .close(hit: nil)
        case .resolve, .address:
            return .keep
        }
    }

    /// What resolving and connecting this exchange's origin waits for.
    var pending: Pending {
        Pending(purpose: .forward(self), origin: origin, profile: profile, inspect: inspect)
    }
}
