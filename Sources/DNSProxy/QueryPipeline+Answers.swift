import DNSWire
import DomainMatch
import Policy

extension QueryPipeline {
    /// From the cache when fresh; otherwise a resolution (carrying a stale copy if any).
    func resolveOrAnswer(
        _ query: DNSQuery, _ client: IPAddress, name: DomainName?, profile: Profile,
        purpose: PendingQuery.Purpose, _ snapshot: ProxySnapshot, _ overUDP: Bool, _ now: Now,
        localZone: DomainName? = nil, upstreamName: DNSName? = nil, type: DNSType? = nil, scratch: QueryScratch? = nil
    ) -> Outcome {
        let question = DNSQuestion(
            name: (upstreamName ?? query.question.name).lowercased(),
            type: type ?? query.question.type, dnsClass: query.question.dnsClass)
        let key = CacheKey(
            question, dnssecOK: query.edns?.dnssecOK ?? false, checkingDisabled: query.header.checkingDisabled)
        let found = cache.lookup(key, now: now.monotonicMilliseconds)
        var stale: CacheEntry?
        switch found {
        case .fresh: metrics.cacheHits.add()
        case .stale(let entry):
            metrics.cacheMisses.add()
            stale = entry
        case .miss: metrics.cacheMisses.add()
        }
        let pending = PendingQuery(
            query: query, client: client, name: name, profile: profile, upstreamQuestion: question, key: key,
            purpose: purpose, stale: stale, localZone: localZone, overUDP: overUDP)
        guard case .fresh(let entry, let age) = found else { return .step(.resolve(pending)) }
        return answer(entry, pending, snapshot, age: age, stale: false, now, scratch: scratch)
    }

    /// An upstream reply for `pending` (nil when every upstream failed): cached when it
    /// may be, then answered. Without a usable reply: the stale copy, else SERVFAIL.
    public func complete(_ pending: PendingQuery, reply: [UInt8]?, now: Now, snapshot: ProxySnapshot? = nil) -> Step {
        let snapshot = snapshot ?? self.snapshot
        guard let reply,
            let entry = CacheEntry.make(
                from: reply, now: now.monotonicMilliseconds, minTTL: snapshot.minTTL,
                maxTTL: snapshot.maxTTL, rebinding: snapshot.rebinding)
        else {
            if let stale = pending.stale { return answer(stale, pending, snapshot, age: 0, stale: true, now).step }
            let error = ExtendedDNSError(code: .noReachableAuthority, text: "no upstream answered")
            return .reply(snapshot.answers.serverFailure(pending.query, error: error))
        }
        if entry.ttl > 0 { cache.store(pending.key, entry) }
        return answer(entry, pending, snapshot, age: 0, stale: false, now).step
    }

    /// The stale copy of a pending query, when the upstream has not answered in time
    /// (RFC 8767: 1.8 s); nil when there is none.
    public func staleAnswer(_ pending: PendingQuery, now: Now, snapshot: ProxySnapshot? = nil) -> Step? {
        guard let stale = pending.stale else { return nil }
        return answer(stale, pending, snapshot ?? self.snapshot, age: 0, stale: true, now).step
    }

    /// Answers from an upstream answer: inspection first (docs/dns.md#answer-inspection), then the client's copy.
    func answer(
        _ entry: CacheEntry, _ pending: PendingQuery, _ snapshot: ProxySnapshot, age: UInt32, stale: Bool,
        _ now: Now, scratch: QueryScratch? = nil
    ) -> Outcome {
        let query = pending.query
        let profile = pending.profile
        var ttlCap = cap(snapshot.maxTTL, profile, snapshot, now)
        if let name = pending.name, snapshot.engine.hasBudget(name, rules: profile.rules) {
            ttlCap = min(ttlCap, ServiceUsage.answerTTL)
        }
        switch pending.purpose {
        case .rewrite(let target):
            let maxSize = pending.responseLimit
            if let scratch, !stale,
                let bytes = RewriteAnswer.compose(
                    query, target: target, from: entry, age: age, cap: ttlCap, maxSize: maxSize,
                    reusing: scratch.takeAnswer(), names: &scratch.records)
            {
                scratch.answer = bytes
                return .answer(Answer(writtenIn: scratch))
            }
            return .step(
                .reply(
                    RewriteAnswer.compose(
                        query, target: target, from: entry, age: age, stale: stale, cap: ttlCap,
                        maxSize: maxSize)))
        case .forward(let inspect):
            if inspect, let name = pending.name,
                let found = inspectChain(
                    entry, asked: name, profile: profile, client: pending.client, source: .dns, snapshot, now)
            {
                if found.action == .block {
                    return .step(
                        .reply(
                            snapshot.answers.block(
                                query, reason: found.reasonText,
                                ttl: cap(snapshot.answers.blockTTL, profile, snapshot, now))))
                }
                if let target = found.target {
                    if countsActivity { profile.activity.recordRewrite(target: target) }
                    return rewrite(
                        query, pending.client, name: name, target: target, profile: profile, snapshot,
                        pending.overUDP, now)
                }
            }
            // Records of blocked names and a public name's local addresses go
            // (docs/dns.md#what-answers-may-carry); most answers have none to look at.
            let screened = screen(entry, asked: pending.name, profile: profile, inspect: inspect, snapshot, now)
            return .answer(
                Answer(
                    cached: screened?.entry ?? entry, to: query, age: age, stale: stale, cap: ttlCap,
                    removeECH: profile.rules.filtered, maxSize: pending.responseLimit, error: screened?.error))
        }
    }

    /// Answer inspection (docs/dns.md#answer-inspection), for a DNS client and for the HTTP
    /// proxy alike: the decision on the first name of `entry`'s CNAME chain that `profile`
    /// blocks or rewrites, or nil. A block is recorded as a hit on the name asked, with the
    /// chain name as its rule and `source` as who asked.
    func inspectChain(
        _ entry: CacheEntry, asked name: DomainName, profile: Profile, client: IPAddress, source: HitSource,
        _ snapshot: ProxySnapshot, _ now: Now
    ) -> Decision? {
        guard !entry.chain.isEmpty else { return nil }
        let engine = snapshot.engine
        let local = engine.zone.localDateTime(at: now.unixSeconds)
        for link in entry.chain {
            // The chain is judged by the lists, not the clock: the queried name already
            // passed the cutoff step (and may be on downtime_allow).
            let decision = engine.decide(link, profile: profile, at: now.unixSeconds, local: local, applyCutoff: false)
            if decision.action == .block {
                hits.record(
                    Hit(
                        profile: profile.name, name: name.description, decision: decision, rule: link.description,
                        client: client, source: source, time: now.unixSeconds))
                return decision
            }
            if decision.action == .rewrite, decision.target != nil { return decision }
        }
        return nil
    }

    /// A safe-search rewrite (docs/dns.md#safe-search-rewrites): HTTPS/SVCB get NODATA; A and AAAA a CNAME followed
    /// by the target's records; every other type the CNAME alone.
    func rewrite(
        _ query: DNSQuery, _ client: IPAddress, name: DomainName, target: DomainName, profile: Profile,
        _ snapshot: ProxySnapshot, _ overUDP: Bool, _ now: Now, scratch: QueryScratch? = nil
    ) -> Outcome {
        let type = query.question.type
        let maxSize = query.responseLimit(overUDP: overUDP)
        let parsedTarget = if let scratch { scratch.targetName(target) } else { try? DNSName(wire: target.wire) }
        guard let targetName = parsedTarget else { return .step(.reply(snapshot.answers.serverFailure(query))) }
        if type == .https || type == .svcb {
            return .step(
                .reply(
                    snapshot.answers.negative(
                        query, rcode: .noError, ttl: cap(snapshot.answers.blockTTL, profile, snapshot, now))))
        }
        guard type == .a || type == .aaaa else {
            return .step(
                .reply(
                    RewriteAnswer.cnameOnly(
                        query, target: targetName, ttl: cap(RewriteAnswer.maxCNAMETTL, profile, snapshot, now),
                        maxSize: maxSize)))
        }
        return resolveOrAnswer(
            query, client, name: name, profile: profile, purpose: .rewrite(target: targetName), snapshot,
            overUDP, now, upstreamName: targetName, type: type, scratch: scratch)
    }
}
