import DNSWire
import DomainMatch
import Policy

/// One host lookup waiting for an upstream: what to ask and what was decided before.
public struct HostResolution: Sendable {
    public let name: DomainName
    public let profile: Profile
    public let inspect: Bool
    public let client: IPAddress
    public let question: DNSQuestion
    public let key: CacheKey
    /// `local_forward`'s zone when the name goes to its server instead of the upstreams.
    public let localZone: DomainName?
    /// An expired answer to fall back on when no upstream answers (RFC 8767).
    public let stale: CacheEntry?
}

/// The HTTP proxy's door into the resolver (docs/proxy.md#connect): typed, for a host the
/// proxy has decided once already for the client's profile. The name is not decided again
/// here; the same cache, local zones, upstreams and answer inspection serve it as they
/// serve a DNS client, and a block found in the CNAME chain comes back as a `Decision`,
/// never as text.
extension QueryPipeline {
    public enum HostStep: Sendable {
        case done(ResolvedHost)
        case resolve(HostResolution)
    }

    /// Looks `name` up (type A or AAAA) for `profile`; `inspect` is false for names the
    /// decision allowed outright (parent-allowed, system) and for unfiltered profiles.
    public func lookUpHost(
        _ name: DomainName, type: DNSType, profile: Profile, inspect: Bool, client: IPAddress, now: Now,
        snapshot: ProxySnapshot
    ) -> HostStep {
        var localZone: DomainName?
        switch snapshot.localZones.answer(for: name) {
        // The canary proves the DNS answers (`doctor` asks it there); through the proxy it
        // is a name no server has, like any other under `.test`.
        case .nxdomain?, .canary?: return .done(.notFound)
        case .nodata?: return .done(.noAddress)
        // The gateway itself: a connection there through the proxy is refused anyway
        // (a local destination); the child's page is reached directly.
        case .home?: return .done(.notFound)
        case .forward(let zone)?: localZone = zone
        case nil: break
        }
        guard let wireName = try? DNSName(wire: name.wire) else { return .done(.failed) }
        let question = DNSQuestion(name: wireName, type: type)
        let key = CacheKey(question, dnssecOK: false, checkingDisabled: false)
        func resolution(_ stale: CacheEntry?) -> HostResolution {
            HostResolution(
                name: name, profile: profile, inspect: inspect, client: client, question: question, key: key,
                localZone: localZone, stale: stale)
        }
        switch cache.lookup(key, now: now.monotonicMilliseconds) {
        case .fresh(let entry, _): return .done(host(from: entry, resolution(nil), snapshot, now))
        case .stale(let entry): return .resolve(resolution(entry))
        case .miss: return .resolve(resolution(nil))
        }
    }

    /// The upstream's reply for `resolution` (nil when every upstream failed): cached when
    /// it may be, then read; without a usable reply the stale copy, else `.failed`.
    public func finishHost(
        _ resolution: HostResolution, reply: [UInt8]?, now: Now, snapshot: ProxySnapshot
    ) -> ResolvedHost {
        guard let reply,
            let entry = CacheEntry.make(
                from: reply, now: now.monotonicMilliseconds, minTTL: snapshot.minTTL, maxTTL: snapshot.maxTTL,
                rebinding: snapshot.rebinding)
        else {
            return resolution.stale.map { host(from: $0, resolution, snapshot, now) } ?? .failed
        }
        if entry.ttl > 0 { cache.store(resolution.key, entry) }
        return host(from: entry, resolution, snapshot, now)
    }

    func host(
        from entry: CacheEntry, _ resolution: HostResolution, _ snapshot: ProxySnapshot, _ now: Now
    )
        -> ResolvedHost
    {
        if resolution.inspect,
            let found = inspectChain(
                entry, asked: resolution.name, profile: resolution.profile, client: resolution.client,
                source: .proxy, snapshot, now)
        {
            if found.action == .block { return .blocked(found) }
            if let target = found.target { return .rewrite(target) }
        }
        switch entry.rcode {
        case .noError: break
        case .nxDomain: return .notFound
        default: return .failed
        }
        return Self.addresses(in: entry.response).map { $0.isEmpty ? .noAddress : .addresses($0) } ?? .failed
    }

    /// The A and AAAA records of a response's answer section, in order, read in place with
    /// the record cursor (every proxy lookup of a cached name reads them: a full parse made
    /// every record and name of the message first); nil when the message cannot be read.
    static func addresses(in response: [UInt8]) -> [IPAddress]? {
        guard var cursor = try? DNSRecordCursor(response) else { return nil }
        var addresses: [IPAddress] = []
        while true {
            let next: DNSRecordLocation?
            do { next = try cursor.next(in: response) } catch { return nil }
            guard let record = next else { return addresses }
            guard record.section == .answer, record.type == .a || record.type == .aaaa else { continue }
            // Decoded as the full parse decodes it: addresses in class IN only, a length
            // that is not an address's refused.
            var reader = DNSReader(response, readerIndex: record.rdataRange.lowerBound)
            guard
                let rdata = try? reader.readRData(
                    type: record.type, dnsClass: record.dnsClass, length: record.rdataRange.count)
            else { return nil }
            if let address = rdata.ipv4 {
                addresses.append(.v4(address.value))
            } else if let address = rdata.ipv6 {
                addresses.append(.v6(high: address.high, low: address.low))
            }
        }
    }
}
