import DomainMatch

/// What the gateway's resolver found for a host the HTTP proxy has already decided, as
/// the resolver (DNSProxy) says it and the proxy's state machine (ProxyCore) reads it.
public enum ResolvedHost: Sendable, Equatable {
    /// Every A or AAAA record of the answer (after a CNAME chain, those of its end), in order.
    case addresses([IPAddress])
    /// The answer's CNAME chain reaches a name the profile blocks: the decision on that
    /// name (the hit is recorded, `source: proxy`).
    case blocked(Decision)
    /// The chain reaches a safe-search name: this target is looked up (uninspected) and
    /// connected to instead, as a DNS client would get it.
    case rewrite(DomainName)
    /// NOERROR without an address of the type asked (NODATA).
    case noAddress
    /// NXDOMAIN.
    case notFound
    /// SERVFAIL, REFUSED, no upstream answered, or an answer that cannot be read.
    case failed
}
