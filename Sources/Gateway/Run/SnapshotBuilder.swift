import Blocklists
import Config
import DNSProxy
import DNSUpstream
import DomainMatch
import Policy
import Zoneinfo

/// Builds the proxy's snapshot from its parts. The category lists are built once and
/// shared; a new policy only rebuilds the parent's small lists (docs/benchmarks.md#targets: a policy change
/// never rebuilds the category trie).
struct SnapshotBuilder {
    let options: RunOptions
    let decisions: DecisionOptions
    let zone: ZoneRules
    let lists: CategoryLists

    /// Query and rewrite counts survive every rebuild: one set per profile for the run.
    let activity: ActivityCounters

    func make(rules: PolicyRules) -> ProxySnapshot {
        let engine = DecisionEngine(
            system: SystemRules(decisions), categories: lists.categorySet, zone: zone,
            profiles: ProfileTable(single: rules))
        var servers: [DomainName: UpstreamSpec] = [:]
        for forward in options.localForward { servers[forward.zone] = forward.server }
        return ProxySnapshot(
            engine: engine, answers: AnswerBuilder(mode: options.blockMode, blockTTL: options.blockTTL),
            localZones: LocalZones(forwarded: Set(servers.keys)), allowClients: options.allowClients,
            rateLimiter: RateLimiter(rate: options.rateLimit), minTTL: options.cacheMinTTL,
            maxTTL: options.cacheMaxTTL, upstreams: options.upstreams, localServers: servers,
            activity: activity)
    }
}
