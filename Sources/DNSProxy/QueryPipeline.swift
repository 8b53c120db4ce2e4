import DNSWire
import DomainMatch
import Locks
import Policy
import Zoneinfo

/// One query from packet to answer, without I/O (docs/dns.md): the server hands in bytes and
/// carries out the step that comes back; an upstream reply comes back through `complete`.
///
/// The stages, cheapest and most hostile-input-proof first (docs/dns.md#hostile-input, docs/ARCHITECTURE.md#house-habits (4)):
/// header (drop what cannot be read, and responses) → opcode (NOTIMP) → full question
/// parse (FORMERR) → `allow_clients` (REFUSED: never an open resolver) → rate limit
/// (REFUSED) → local answers (docs/dns.md#local-answers: before any decision, never hits) → DNSSEC's own
/// types, undecided (docs/dns.md#dnssec) → the decision (block / rewrite / allow) → the cache → the upstream.
public final class QueryPipeline: Sendable {
    public enum Step: Sendable {
        case drop
        case reply([UInt8])
        case resolve(PendingQuery)
    }

    /// What `receive(datagram:)` comes back with: a step, or an answer still to be written.
    public enum Outcome {
        case step(Step)
        case answer(Answer)

        /// As a step, the answer written into an array of its own.
        public var step: Step {
            switch self {
            case .step(let step): return step
            case .answer(let answer): return .reply(answer.bytes)
            }
        }
    }

    public let cache: ResponseCache
    /// Per-client query budgets for the whole run (`rate_limit`): kept across snapshots.
    public let rateLimiter: RateLimiter
    public let hits: any HitRecorder
    /// Whether queries and rewrites count in the profile's activity: not for the HTTP
    /// proxy's own lookups, which the proxy counts once per request.
    public let countsActivity: Bool
    /// Counts for `/metrics`: queries by type and outcome, cache hits and misses.
    public let metrics: DNSMetrics
    private let current: Lock<ProxySnapshot>

    public init(
        snapshot: ProxySnapshot, cache: ResponseCache, rateLimit: Int = 0, hits: any HitRecorder,
        countsActivity: Bool = true, metrics: DNSMetrics = DNSMetrics()
    ) {
        current = Lock(snapshot)
        rateLimiter = RateLimiter(rate: rateLimit)
        self.metrics = metrics
        self.cache = cache
        self.hits = hits
        self.countsActivity = countsActivity
    }

    /// The latest snapshot. Loop threads keep their own copy (`QueryDriver.snapshot`), so
    /// no query takes this lock.
    public var snapshot: ProxySnapshot { current.withLock { $0 } }

    /// Publishes a new snapshot; queries already in flight finish with the old one.
    public func replace(_ snapshot: ProxySnapshot) { current.withLock { $0 = snapshot } }

    public func receive(
        _ packet: [UInt8], from client: IPAddress, mac: MACAddress? = nil, overUDP: Bool, now: Now
    ) -> Step {
        receive(packet, from: client, mac: mac, overUDP: overUDP, now: now, snapshot: snapshot)
    }

    /// `mac` is the client's link-layer address when the neighbour table knows it: the
    /// profile is chosen by it before the address.
    public func receive(
        _ packet: [UInt8], from client: IPAddress, mac: MACAddress? = nil, overUDP: Bool, now: Now,
        snapshot: ProxySnapshot
    ) -> Step {
        guard let header = try? DNSHeader(packet), !header.isResponse else { return .drop }
        guard header.opcode == .query else { return .reply(DNSPacket.errorResponse(to: header, rcode: .notImp)) }
        guard let query = try? DNSQuery.parse(packet) else {
            return .reply(DNSPacket.errorResponse(to: header, rcode: .formErr))
        }
        return respond(to: query, from: client, mac: mac, overUDP: overUDP, now: now, snapshot: snapshot).step
    }

    /// A datagram where it lies in its receive slot, for the UDP server (one per loop):
    /// the common query is read in place into `scratch`, and a cached answer comes back
    /// unwritten (a block or a rewrite written in `scratch`), for the server to write into a
    /// send slot (docs/performance.md#allocations-per-query). Any other packet takes
    /// `receive`'s path on a copy, so the outcome is the same.
    public func receive(
        datagram packet: UnsafeRawBufferPointer, from client: IPAddress, mac: MACAddress?, now: Now,
        snapshot: ProxySnapshot, scratch: QueryScratch
    ) -> Outcome {
        guard let query = DNSQuery.parseCommon(packet, nameStorage: &scratch.question), !query.header.isResponse,
            query.header.opcode == .query
        else {
            return .step(receive(Array(packet), from: client, mac: mac, overUDP: true, now: now, snapshot: snapshot))
        }
        return respond(to: query, from: client, mac: mac, overUDP: true, now: now, snapshot: snapshot, scratch: scratch)
    }

    /// Every stage after the parse, for both entries.
    func respond(
        to query: DNSQuery, from client: IPAddress, mac: MACAddress?, overUDP: Bool, now: Now,
        snapshot: ProxySnapshot, scratch: QueryScratch? = nil
    ) -> Outcome {
        let answers = snapshot.answers
        guard snapshot.allowClients.contains(client) else {
            return .step(
                .reply(
                    answers.refused(query, error: ExtendedDNSError(code: .prohibited, text: "client not allowed"))))
        }
        guard rateLimiter.allow(client, now: now.monotonicMilliseconds) else {
            return .step(.reply(answers.refused(query, error: ExtendedDNSError(code: .other, text: "rate limit"))))
        }
        if let asked = query.edns, asked.version > 0 {
            // RFC 6891 §6.1.3: BADVERS, with an OPT of our own version.
            // BADVERS is 16: the header's four bits carry 0, the OPT's upper eight carry 1.
            let edns = EDNS.answering(
                asked, udpPayloadSize: AnswerBuilder.udpPayload, rcodeHigh: UInt8(DNSRcode.badVers.rawValue >> 4))
            let writer = DNSMessageWriter(
                responseTo: query, rcode: DNSRcode(DNSRcode.badVers.rawValue & 0x0F), edns: edns)
            return .step(.reply(writer.finish(maxSize: query.udpResponseLimit())))
        }
        let profile = snapshot.engine.profiles.choose(Client(address: client, mac: mac))
        if countsActivity { profile.activity.recordQuery(from: Self.sighting(client, mac: mac, overUDP: overUDP)) }
        let question = query.question
        guard question.dnsClass == .in, question.type != .axfr, question.type != .ixfr else {
            return .step(
                .reply(
                    answers.refused(query, error: ExtendedDNSError(code: .notSupported, text: "only class IN queries")))
            )
        }
        let matcherName =
            if let scratch { DomainName(wire: question.name.wire, storage: &scratch.name) } else {
                DomainName(wire: question.name.wire)
            }
        guard let name = matcherName else {
            // The root: nothing to decide.
            return resolveOrAnswer(
                query, client, name: nil, profile: profile, purpose: .forward(inspect: false), snapshot,
                overUDP, now)
        }
        switch snapshot.localZones.answer(for: name) {
        case .nxdomain?: return .step(.reply(answers.negative(query, rcode: .nxDomain, ttl: answers.blockTTL)))
        case .nodata?: return .step(.reply(answers.negative(query, rcode: .noError, ttl: answers.blockTTL)))
        case .home?:
            return .step(.reply(answers.addresses(query, snapshot.localZones.homeAddresses, ttl: answers.blockTTL)))
        case .canary?:
            // Blocked exactly where a list block would be, so it proves the profile filters;
            // for an unfiltered one it is what any other `.test` name is.
            guard profile.rules.filtered, !question.type.isDNSSEC else {
                return .step(.reply(answers.negative(query, rcode: .nxDomain, ttl: answers.blockTTL)))
            }
            return .step(.reply(answers.block(query, reason: LocalAnswer.canaryReason, ttl: answers.blockTTL)))
        case .forward(let zone)?:
            return resolveOrAnswer(
                query, client, name: name, profile: profile, purpose: .forward(inspect: false), snapshot,
                overUDP, now, localZone: zone)
        case nil: break
        }
        if question.type.isDNSSEC {
            // Undecided (docs/dns.md#dnssec): a validator proves with these that a zone is
            // signed or not, and a blocked or rewritten DS or DNSKEY would make it fail every
            // name of the zone, the allowed ones and the rewrites included.
            return resolveOrAnswer(
                query, client, name: name, profile: profile, purpose: .forward(inspect: false), snapshot,
                overUDP, now, scratch: scratch)
        }
        let engine = snapshot.engine
        let local =
            scratch?.clock.localDateTime(at: now.unixSeconds, in: engine.zone)
            ?? engine.zone.localDateTime(at: now.unixSeconds)
        let decision = engine.decide(name, profile: profile, at: now.unixSeconds, local: local)
        // An answered name spends a minute of its app's budget; a blocked one does not.
        if countsActivity, decision.action != .block {
            engine.recordUse(of: name, by: profile, at: now.unixSeconds, local: local)
        }
        switch decision.action {
        case .block:
            hits.record(
                Hit(
                    profile: profile.name, name: name, decision: decision, client: client,
                    source: .dns, time: now.unixSeconds))
            let bytes = answers.block(
                query, ttl: cap(answers.blockTTL, profile, snapshot, now), reusing: scratch?.takeAnswer() ?? []
            ) { decision.appendReasonText(to: &$0) }
            guard let scratch else { return .step(.reply(bytes)) }
            scratch.answer = bytes
            return .answer(Answer(writtenIn: scratch))
        case .rewrite:
            guard let target = decision.target else {
                return .step(.reply(answers.serverFailure(query)))
            }
            if countsActivity { profile.activity.recordRewrite(target: target) }
            return rewrite(
                query, client, name: name, target: target, profile: profile, snapshot, overUDP, now, scratch: scratch)
        case .allow:
            let inspect = profile.rules.inspectsAnswer(after: decision)
            return resolveOrAnswer(
                query, client, name: name, profile: profile, purpose: .forward(inspect: inspect), snapshot,
                overUDP, now, scratch: scratch)
        }
    }

    /// The device `status` names for a query (docs/sync.md#hits), or nil when the
    /// query proves none: a UDP source address is whatever the sender wrote, so over UDP a
    /// client is named only when the neighbour table knows its MAC (`mac`) or it is on
    /// loopback, which no other host can send from; over TCP the handshake proved the
    /// address. A device that spoofs sources therefore adds no devices, only queries.
    static func sighting(_ client: IPAddress, mac: MACAddress?, overUDP: Bool) -> SeenClient? {
        guard !overUDP || mac != nil || client.isLoopback else { return nil }
        return SeenClient(address: client, mac: mac)
    }

    /// `ttl` capped at the seconds until the client's next cutoff boundary
    /// (docs/decisions.md#time-rules) and the next start or end of a parent's override.
    func cap(_ ttl: UInt32, _ profile: Profile, _ snapshot: ProxySnapshot, _ now: Now) -> UInt32 {
        let rules = profile.rules
        var capped = Int64(ttl)
        if let left = rules.boundaries.secondsLeft(from: now.unixSeconds, rules: rules.time, zone: snapshot.engine.zone)
        {
            capped = min(capped, left)
        }
        if !profile.overrides.isEmpty, let change = profile.overrides.nextChange(after: now.unixSeconds) {
            capped = min(capped, max(0, change - now.unixSeconds))
        }
        return UInt32(capped)
    }
}
