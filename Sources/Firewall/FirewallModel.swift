import DomainMatch
import Policy

/// Everything the firewall's table is made from (docs/network.md#the-firewall): where the
/// LAN is, where redirected connections go, who is filtered, and which addresses are
/// DNS-over-HTTPS resolvers. Built by the `firewall` command from the configuration.
public struct FirewallModel: Sendable, Equatable {
    /// Traffic entering through these interfaces is caught; nothing else is touched.
    public var lanInterfaces: [InterfaceName]
    /// Where DNS (port 53) to other servers is redirected.
    public var dns: RedirectPorts
    /// Where TCP 80 and 443 are redirected (the transparent listener), if anywhere.
    public var transparent: RedirectPorts?
    /// Who is filtered: members of a profile named `none` are exempt, and so is everyone
    /// no member covers when the default profile is `none`.
    public var roster: ProfileRoster
    /// DNS-over-HTTPS resolvers: TCP 443 to them is refused.
    public var doh: [AddressRange]
    /// The parent's page's TCP ports (`web_listen`, `web_http_listen`): open from the LAN
    /// interfaces and this host only.
    public var pagePorts: [UInt16]
    /// Each filtering profile's `egress` by name; a profile not named is `web`, and `none`
    /// is never kept to the web.
    public var egress: [String: Egress]
    /// The parent's `egress_allow`: what a `web` device may reach besides the built-in set.
    public var egressAllow: [EgressRule]

    public init(
        lanInterfaces: [InterfaceName], dns: RedirectPorts, transparent: RedirectPorts? = nil,
        roster: ProfileRoster, doh: [AddressRange], pagePorts: [UInt16] = [], egress: [String: Egress] = [:],
        egressAllow: [EgressRule] = []
    ) {
        self.pagePorts = Array(Set(pagePorts)).sorted()
        self.egress = egress
        self.egressAllow = egressAllow
        self.lanInterfaces = lanInterfaces
        self.dns = dns
        self.transparent = transparent
        self.roster = roster
        self.doh = doh
    }
}

/// The gateway's ports that redirected connections reach, per address family. nftables
/// `redirect` sends a connection to the address of the interface it came in on, so the
/// listener must take connections there: on that address or on the wildcard.
public struct RedirectPorts: Sendable, Equatable {
    public var v4: UInt16
    public var v6: UInt16

    public init(v4: UInt16, v6: UInt16) {
        self.v4 = v4
        self.v6 = v6
    }

    public init(_ port: UInt16) { self.init(v4: port, v6: port) }

    /// The ports of `listen` that a redirect can reach: per family the wildcard's, else
    /// the first address's that is not loopback. A family without such an address gets
    /// the other family's port: its redirected connections then reach no listener and
    /// fail (closed), which `unserved` names so the command can warn. Nil when every
    /// address is loopback (or there is none): nothing could be reached at all.
    public static func serving(_ listen: [ListenAddress]) -> (ports: RedirectPorts, unserved: [String])? {
        func port(_ isFamily: (IPAddress) -> Bool) -> UInt16? {
            // A redirected connection never arrives at a loopback address.
            let candidates = listen.filter { isFamily($0.address) && !$0.address.isLoopback }
            return (candidates.first { $0.address.isUnspecified } ?? candidates.first)?.port
        }
        let v4 = port { if case .v4 = $0 { true } else { false } }
        let v6 = port { if case .v6 = $0 { true } else { false } }
        switch (v4, v6) {
        case (let v4?, let v6?): return (RedirectPorts(v4: v4, v6: v6), [])
        case (let v4?, nil): return (RedirectPorts(v4), ["IPv6"])
        case (nil, let v6?): return (RedirectPorts(v6), ["IPv4"])
        case (nil, nil): return nil
        }
    }
}

extension IPAddress {
    /// 0.0.0.0 or ::, which takes connections on every address.
    var isUnspecified: Bool {
        switch self {
        case .v4(let value): value == 0
        case .v6(let high, let low): high == 0 && low == 0
        }
    }
}
