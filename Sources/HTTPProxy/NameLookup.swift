import DNSWire
import DomainMatch
import ProxyCore

/// The DNS side of a proxy lookup (docs/proxy.md#connect: "resolve through the gateway's own
/// resolver"): the query the proxy hands to the loop's `QueryDriver`, exactly as a
/// client would send it over TCP (with EDNS, so a block comes back with its reason), and
/// what the answer means. Pure.
public enum NameLookup {
    /// A recursive query for `name` of `type` (A or AAAA).
    public static func query(_ name: DomainName, type: DNSType) -> [UInt8]? {
        guard let question = try? DNSName(name.description) else { return nil }
        var header = DNSHeader(id: UInt16.random(in: 0...UInt16.max))
        header.recursionDesired = true
        var writer = DNSMessageWriter(header: header, edns: EDNS(udpPayloadSize: 1232))
        writer.addQuestion(DNSQuestion(name: question, type: type))
        return writer.finish()
    }

    /// Reads an answer: a blocked answer is recognised by its EDE 15 whatever the rcode
    /// (`block_mode` decides the rcode); addresses are every A/AAAA record of the answer
    /// section (after a CNAME chain, those of its end), in order.
    public static func interpret(_ reply: [UInt8]) -> LookupResult {
        guard let message = try? DNSMessage.parse(reply) else { return .failed }
        if let blocked = (try? message.edns?.extendedErrors())?.first(where: { $0.code == .blocked }) {
            return .blocked(BlockReason(text: blocked.text))
        }
        switch message.rcode {
        case .noError: break
        case .nxDomain: return .notFound
        default: return .failed
        }
        var addresses: [IPAddress] = []
        for record in message.answers {
            switch record.rdata {
            case .a(let address): addresses.append(.v4(address.value))
            case .aaaa(let address): addresses.append(.v6(high: address.high, low: address.low))
            default: continue
            }
        }
        return addresses.isEmpty ? .noAddress : .addresses(addresses)
    }
}
