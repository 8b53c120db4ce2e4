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

    /// The OPT of an answer: only when the client sent one (RFC 6891 §7), its DO copied
    /// (RFC 3225 §3), with an EDE.
    static func edns(for query: DNSQuery, error: ExtendedDNSError? = nil) -> EDNS? {
        guard let asked = query.edns else { return nil }
        return EDNS.answering(asked, udpPayloadSize: udpPayload, options: error.map { [$0.option] } ?? [])
    }

    /// A block answer; `reason` is the reason text of docs/decisions.md#the-decision-order, carried in EDE 15.
    /// `ttl` is `block_ttl` already capped at the next cutoff boundary.
    public func block(_ query: DNSQuery, reason: String, ttl: UInt32) -> [UInt8] {
        block(query, ttl: ttl, reusing: []) { bytes in
            var text = reason
            text.withUTF8 { bytes.append(contentsOf: $0) }
        }
    }

    /// The same block answer written over `storage` (`DNSWriter(reusing:)`), the reason's
    /// text appended by `reason`: with storage a loop reuses, no allocation.
    public func block(
        _ query: DNSQuery, ttl: UInt32, reusing storage: consuming [UInt8], reason: (inout [UInt8]) -> Void
    ) -> [UInt8] {
        let type = query.question.type
        let edns = Self.edns(for: query)
        var rcode = DNSRcode.noError
        var record: ResourceRecord
        switch (mode, type) {
        case (.nxdomain, _):
            rcode = .nxDomain
            record = Self.soa(owner: query.question.name, ttl: ttl)
        case (.refused, _):
            let writer = DNSMessageWriter(responseTo: query, rcode: .refused, edns: edns, reusing: consume storage)
            return (consume writer).finish(maxSize: query.udpResponseLimit(), extendedError: .blocked, text: reason)
        case (.null, .a): record = ResourceRecord(name: query.question.name, ttl: ttl, rdata: .a(RData.IPv4(0)))
        case (.null, .aaaa):
            record = ResourceRecord(name: query.question.name, ttl: ttl, rdata: .aaaa(RData.IPv6(high: 0, low: 0)))
        case (.address(let v4, _), .a):
            record = ResourceRecord(name: query.question.name, ttl: ttl, rdata: .a(RData.IPv4(v4)))
        case (.address(_, let v6?), .aaaa):
            record = ResourceRecord(
                name: query.question.name, ttl: ttl, rdata: .aaaa(RData.IPv6(high: v6.high, low: v6.low)))
        default:
            // NODATA for every other type.
            record = Self.soa(owner: query.question.name, ttl: ttl)
        }
        var writer = DNSMessageWriter(responseTo: query, rcode: rcode, edns: edns, reusing: consume storage)
        writer.addRecord(record, to: record.type == .soa ? .authority : .answer)
        // Consumed, not copied: a copy's bytes changed would be an array of their own.
        return (consume writer).finish(maxSize: query.udpResponseLimit(), extendedError: .blocked, text: reason)
    }

    /// The addresses of the asked type among `addresses` (A or AAAA), or NODATA with a
    /// synthetic SOA when there are none of it: a name the gateway answers itself.
    public func addresses(_ query: DNSQuery, _ addresses: [IPAddress], ttl: UInt32) -> [UInt8] {
        let name = query.question.name
        var records: [ResourceRecord] = []
        for address in addresses {
            switch (address, query.question.type) {
            case (.v4(let value), .a):
                records.append(ResourceRecord(name: name, ttl: ttl, rdata: .a(RData.IPv4(value))))
            case (.v6(let high, let low), .aaaa):
                records.append(ResourceRecord(name: name, ttl: ttl, rdata: .aaaa(RData.IPv6(high: high, low: low))))
            default: break
            }
        }
        guard !records.isEmpty else { return negative(query, rcode: .noError, ttl: ttl) }
        var writer = DNSMessageWriter(responseTo: query, rcode: .noError, edns: Self.edns(for: query))
        for record in records { writer.addRecord(record, to: .answer) }
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
