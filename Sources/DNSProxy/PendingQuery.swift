import DNSWire
import DomainMatch
import Policy

/// A query that needs an upstream answer: what to ask, and what to do with the reply.
public struct PendingQuery: Sendable {
    public enum Purpose: Sendable {
        /// Answer the client's own question; inspect the CNAME chain unless the name was
        /// parent-allowed or the client is unfiltered.
        case forward(inspect: Bool)
        /// Answer with a CNAME to `target` followed by the target's records (docs/dns.md#safe-search-rewrites).
        case rewrite(target: DNSName)
    }

    public let query: DNSQuery
    public let client: IPAddress
    /// Nil for a query about the root.
    public let name: DomainName?
    public let profile: Profile
    /// The question sent upstream (lowercased; the rewrite target for a rewrite).
    public let upstreamQuestion: DNSQuestion
    public let key: CacheKey
    public let purpose: Purpose
    /// An expired answer to fall back on when the upstream is slow or fails (RFC 8767).
    public let stale: CacheEntry?
    /// `local_forward`'s zone when the name goes to its server instead of the upstreams.
    public let localZone: DomainName?
    /// Whether the client asked over UDP (answers are cut to its size limit).
    public let overUDP: Bool

    /// The largest answer the client takes.
    var responseLimit: Int { query.responseLimit(overUDP: overUDP) }
}
