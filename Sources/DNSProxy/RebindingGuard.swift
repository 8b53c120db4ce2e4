import DomainMatch

/// DNS rebinding protection (docs/dns.md#what-answers-may-carry), as dnsmasq's
/// `stop-dns-rebind`: which addresses an answer for a public name may not carry, and which
/// names may carry them. Part of the snapshot; the HTTP proxy applies the same rule to the
/// addresses it would connect to (`local_destination`).
public struct RebindingGuard: Sendable {
    /// Off with `allow_local_destinations`: the test setting under which loopback and the
    /// gateway's own addresses are fair destinations, and upstreams answer with them.
    public let enabled: Bool
    /// `rebind_allow` with the `local_forward` zones: names that may answer with local
    /// addresses (a LAN's own names).
    public let allow: DomainSuffixes
    /// The gateway's own addresses, every interface's.
    public let ownAddresses: Set<IPAddress>

    public init(
        enabled: Bool = true,
        allow: DomainSuffixes = .localNames,
        ownAddresses: Set<IPAddress> = []
    ) {
        self.enabled = enabled
        self.allow = allow
        self.ownAddresses = ownAddresses
    }

    /// Loopback, unspecified, link-local, private-use (`IPAddress.isPrivateUse`) or one
    /// of the gateway's own, mapped IPv4 included: never the address of a public site.
    public func isLocal(_ address: IPAddress) -> Bool {
        let address = address.unmapped
        return address.isHostOrLinkScoped || address.isPrivateUse || ownAddresses.contains(address)
    }

    /// Whether an answer to a question for `name` loses its local addresses: a public name
    /// (not under `allow`), while the guard is on. Nil is the root.
    func applies(to name: DomainName?) -> Bool {
        guard enabled else { return false }
        guard let name else { return true }
        return !allow.covers(name)
    }
}
