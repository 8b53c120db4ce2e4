import DNSWire
import DomainMatch

/// Answers the proxy makes itself: blocks (per `block_mode`, with a synthetic SOA and an
/// Extended DNS Error), local answers, refusals and rewrites (docs/dns.md#local-answers).
public struct AnswerBuilder: Sendable {
    public let mode: BlockMode
    /// `block_ttl` in seconds.
    public let blockTTL: UInt32
    /// The largest UDP answer this server sends (RFC 9715's 1232 avoids fragmentation).
    public static let udpPayload: UInt16 = 1232

    public init(mode: BlockMode, blockTTL: UInt32) {
        self.mode = mode
        self.blockTTL = blockTTL
    }

    /// The OPT of an answer: only when the client sent one (RFC 6891 §7), with an EDE.
    static func edns(for query: DNSQuery, error: ExtendedDNSError?) -> EDNS? {
        guard query.edns != nil else { return nil }
        return EDNS(udpPayloadSize: udpPayload, options: error.map { [$0.option] } ?? [])
    }

    /// A block answer; `reason` is the reason text of docs/decisions.md#the-decision-order, carried in EDE 15.
    /// `ttl` is `block_ttl` already capped at the next cutoff boundary.
    public func block(_ query: DNSQuery, reason: String, ttl: UInt32) -> [UInt8] {
        let error = ExtendedDNSError(code: .blocked, text: reason)
        let type = query.question.type
        switch mode {
        case .nxdomain:
            return negative(query, rcode: .nxDomain, ttl: ttl, error: error)
        case .refused:
            return refused(query, error: error)
        case .null:
            if type == .a { return address(query, .a(RData.IPv4(0)), ttl: ttl, error: error) }
            if type == .aaaa { return address(query, .aaaa(RData.IPv6(high: 0, low: 0)), ttl: ttl, error: error) }
            return negative(query, rcode: .noError, ttl: ttl, error: error)
        case .address(let v4, let v6):
            if type == .a { return address(query, .a(RData.IPv4(v4)), ttl: ttl, error: error) }
            if type == .aaaa, let v6 {
                return address(query, .aaaa(RData.IPv6(high: v6.high, low: v6.low)), ttl: ttl, error: error)
            }
            return negative(query, rcode: .noError, ttl: ttl, error: error)
        }
    }

    private func address(_ query: DNSQuery, _ rdata: RData, ttl: UInt32, error: ExtendedDNSError) -> [UInt8] {
        var writer = DNSMessageWriter(responseTo: query, edns: Self.edns(for: query, error: error))
        writer.addRecord(ResourceRecord(name: query.question.name, ttl: ttl, rdata: rdata), to: .answer)
        return writer.finish(maxSize: query.udpResponseLimit())
    }

    /// NXDOMAIN or NODATA with a synthetic SOA whose minimum is `ttl` (RFC 2308).
    public func negative(_ query: DNSQuery, rcode: DNSRcode, ttl: UInt32, error: ExtendedDNSError? = nil) -> [UInt8] {
        var writer = DNSMessageWriter(responseTo: query, rcode: rcode, edns: Self.edns(for: query, error: error))
        writer.addRecord(Self.soa(owner: query.question.name, ttl: ttl), to: .authority)
        return writer.finish(maxSize: query.udpResponseLimit())
    }

    /// REFUSED, e.g. for a client outside `allow_clients` or over its rate.
    public func refused(_ query: DNSQuery, error: ExtendedDNSError? = nil) -> [UInt8] {
        let writer = DNSMessageWriter(responseTo: query, rcode: .refused, edns: Self.edns(for: query, error: error))
        return writer.finish(maxSize: query.udpResponseLimit())
    }

    /// SERVFAIL when every upstream failed.
    public func serverFailure(_ query: DNSQuery, error: ExtendedDNSError? = nil) -> [UInt8] {
        let writer = DNSMessageWriter(responseTo: query, rcode: .servFail, edns: Self.edns(for: query, error: error))
        return writer.finish(maxSize: query.udpResponseLimit())
    }

    static let soaServer = try! DNSName("phosra-gate.invalid.")
    static let soaMailbox = try! DNSName("hostmaster.phosra-gate.invalid.")

    static func soa(owner: DNSName, ttl: UInt32) -> ResourceRecord {
        let soa = RData.SOA(
            mname: soaServer, rname: soaMailbox, serial: 1, refresh: 3600, retry: 600, expire: 86_400,
            minimum: ttl)
        return ResourceRecord(name: owner, ttl: ttl, rdata: .soa(soa))
    }
}
