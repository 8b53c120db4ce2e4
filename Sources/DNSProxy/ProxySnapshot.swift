import DNSUpstream
import DomainMatch
import Policy

/// Everything a query is decided with, immutable: built aside on start, on a policy
/// change and on SIGHUP, then swapped whole (readers never see half a change). Policy and
/// configuration only: what lives across swaps (the cache, the rate limiter, counters,
/// neighbour caches) belongs to the pipeline and the loops.
public final class ProxySnapshot: Sendable {
    public let engine: DecisionEngine<LabelTrie>
    public let answers: AnswerBuilder
    public let localZones: LocalZones
    public let allowClients: AccessList
    /// TTL clamps for cached answers, in seconds (`cache_min_ttl`, `cache_max_ttl`).
    public let minTTL: UInt32, maxTTL: UInt32
    /// Where questions go: `upstream`, and `local_forward`'s servers per zone.
    public let upstreams: [UpstreamSpec]
    public let localServers: [DomainName: UpstreamSpec]
    /// Which local addresses a public name's answer loses (docs/dns.md#what-answers-may-carry).
    public let rebinding: RebindingGuard

    public init(
        engine: DecisionEngine<LabelTrie>, answers: AnswerBuilder, localZones: LocalZones = LocalZones(),
        allowClients: AccessList = .defaultClients(),
        minTTL: UInt32 = 0, maxTTL: UInt32 = 86_400, upstreams: [UpstreamSpec] = [],
        localServers: [DomainName: UpstreamSpec] = [:], rebinding: RebindingGuard = RebindingGuard()
    ) {
        self.engine = engine
        self.answers = answers
        self.localZones = localZones
        self.allowClients = allowClients
        self.minTTL = minTTL
        self.maxTTL = maxTTL
        self.upstreams = upstreams
        self.localServers = localServers
        self.rebinding = rebinding
    }

    /// Where a question goes: `local_forward`'s server for its zone, else the upstreams.
    public func servers(for localZone: DomainName?) -> [UpstreamSpec] {
        localZone.flatMap { localServers[$0] }.map { [$0] } ?? upstreams
    }
}

/// The two clocks a query needs: monotonic milliseconds (cache ages, rate limits,
/// timeouts) and the wall clock in unix seconds (the policy's time rules).
public struct Now: Sendable {
    public let monotonicMilliseconds: Int64
    public let unixSeconds: Int64

    public init(monotonicMilliseconds: Int64, unixSeconds: Int64) {
        self.monotonicMilliseconds = monotonicMilliseconds
        self.unixSeconds = unixSeconds
    }
}
