import DNSUpstream
import Metrics

/// The DNS proxy's counts for `/metrics` (docs/operations.md#metrics): every query by its
/// type and how it ended, and the cache's hits and misses. Query types and outcomes are
/// fixed lists, so counting is one atomic add and the label sets stay bounded. Shared by
/// every loop.
public final class DNSMetrics: Sendable {
    public static let types = [
        "A", "AAAA", "HTTPS", "SVCB", "CNAME", "MX", "TXT", "PTR", "SRV", "NS", "SOA", "ANY", "other",
    ]
    private static let typeCodes: [UInt16] = [1, 28, 65, 64, 5, 15, 16, 12, 33, 2, 6, 255]
    /// The response code sent back, `dropped` (no answer: unreadable, or a response), or
    /// `failed` (every upstream failed: SERVFAIL is what the client got).
    public static let outcomes = [
        "noerror", "nxdomain", "servfail", "refused", "formerr", "notimp", "other", "dropped",
    ]

    public let queries = CounterGrid(rows: types, columns: outcomes)
    public let cacheHits = Counter()
    public let cacheMisses = Counter()
    /// Stale answers served (RFC 8767) while the upstream was slow or down.
    public let staleAnswers = Counter()
    public let upstream = UpstreamMetrics()

    public init() {}

    /// The row of `packet`'s question type: read straight from the bytes (the name's
    /// labels skipped), so a packet that does not parse is `other`.
    static func typeRow(_ packet: [UInt8]) -> Int { packet.withUnsafeBytes { typeRow($0) } }

    static func typeRow(_ packet: UnsafeRawBufferPointer) -> Int {
        var offset = 12
        while offset < packet.count {
            let length = Int(packet[offset])
            if length == 0 { break }
            guard length < 64 else { return types.count - 1 }
            offset += 1 + length
        }
        guard offset + 2 < packet.count else { return types.count - 1 }
        let code = UInt16(packet[offset + 1]) << 8 | UInt16(packet[offset + 2])
        for row in 0..<typeCodes.count where typeCodes[row] == code { return row }
        return types.count - 1
    }

    func answered(_ typeRow: Int, reply: [UInt8]) { answered(typeRow, rcode: reply.count > 3 ? reply[3] & 0x0F : 255) }

    /// `rcode`: the low four bits of the reply's rcode (255 for a reply too short to have one).
    func answered(_ typeRow: Int, rcode: UInt8) {
        let column: Int
        switch rcode {
        case 0: column = 0
        case 3: column = 1
        case 2: column = 2
        case 5: column = 3
        case 1: column = 4
        case 4: column = 5
        default: column = 6
        }
        queries.add(row: typeRow, column: column)
    }

    func dropped(_ typeRow: Int) { queries.add(row: typeRow, column: 7) }
}
