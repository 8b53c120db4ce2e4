import DNSProxy
import Policy
import ProxyCore

/// The gateway's own resolver as the proxy uses it (docs/proxy.md#connect: "resolve through the
/// gateway's own resolver, same cache and answer inspection"): a `QueryPipeline` over the
/// DNS pipeline's cache and the loop's upstream client, with three differences that keep
/// the books straight: hits it records are the proxy's (`source: proxy`); its own
/// queries are not counted as the client's DNS queries (the proxy counts each request
/// once); and no DNS rate limit applies (the proxy has `proxy_max_conns_per_client`).
public enum ProxyLookups {
    /// A pipeline sharing `dns`'s cache, recording hits through `hits` as proxy hits.
    public static func pipeline(sharingCacheOf dns: QueryPipeline, hits: any HitRecorder) -> QueryPipeline {
        QueryPipeline(
            snapshot: snapshot(from: dns.snapshot), cache: dns.cache, hits: ProxySourcedHits(base: hits),
            countsActivity: false)
    }

    /// `snapshot` for lookups: block answers as NXDOMAIN with their EDE (whatever
    /// `block_mode` clients get), no rate limit, its query counts discarded.
    public static func snapshot(from snapshot: ProxySnapshot) -> ProxySnapshot {
        ProxySnapshot(
            engine: snapshot.engine, answers: AnswerBuilder(mode: .nxdomain, blockTTL: snapshot.answers.blockTTL),
            localZones: snapshot.localZones, allowClients: snapshot.allowClients,
            rateLimiter: RateLimiter(rate: 0), minTTL: snapshot.minTTL, maxTTL: snapshot.maxTTL,
            upstreams: snapshot.upstreams, localServers: snapshot.localServers)
    }
}

/// Passes hits on with `source: proxy`: a name the resolver blocks while the proxy looks
/// it up is a block of the proxy request.
struct ProxySourcedHits: HitRecorder {
    let base: any HitRecorder

    func record(_ hit: Hit) {
        // The decision is rebuilt from the reason text so the text stays exactly as made.
        let block = BlockReason(text: hit.reasonText)
        base.record(
            Hit(
                profile: hit.profile, name: hit.name, decision: block.decision, rule: hit.rule, client: hit.client,
                source: .proxy, time: hit.time))
    }
}
