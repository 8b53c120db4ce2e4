import DomainMatch

/// What the gateway's resolver said about a host.
public enum LookupResult: Equatable, Sendable {
    case addresses([IPAddress])
    /// A block answer (an Extended DNS Error 15, RFC 8914): the resolver's answer
    /// inspection found a listed name in the CNAME chain (docs/dns.md#answer-inspection). Its text is the reason.
    case blocked(BlockReason)
    /// NOERROR without an address of the type asked (NODATA).
    case noAddress
    /// NXDOMAIN.
    case notFound
    /// SERVFAIL, REFUSED or an answer that cannot be read.
    case failed
}
