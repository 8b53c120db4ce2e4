import DNSWire
import DomainMatch

/// What an upstream answer is cached under: the question (name lowercased) and the
/// flags that change the answer.
public struct CacheKey: Hashable, Sendable {
    public let name: [UInt8]
    public let type: UInt16
    public let dnsClass: UInt16
    public let dnssecOK: Bool
    public let checkingDisabled: Bool
    /// Worked out once: hashing the name byte by byte through `Hasher` on every lookup
    /// showed in profiles.
    private let digest: UInt64

    public init(_ question: DNSQuestion, dnssecOK: Bool, checkingDisabled: Bool) {
        name = question.name.lowercased().wire
        type = question.type.rawValue
        dnsClass = question.dnsClass.rawValue
        self.dnssecOK = dnssecOK
        self.checkingDisabled = checkingDisabled
        var h: UInt64 =
            0xCBF2_9CE4_8422_2325 ^ UInt64(type) << 32 ^ UInt64(dnsClass) << 16
            ^ (dnssecOK ? 2 : 0) ^ (checkingDisabled ? 1 : 0)
        for index in 0..<name.count { h = (h ^ UInt64(name[index])) &* 0x0000_0100_0000_01B3 }
        digest = h
    }

    /// The same key with a name array of its own, of its size: a key made over a loop's
    /// reused storage (`QueryScratch`) would keep that storage and its spare capacity for
    /// as long as the entry is cached.
    var owned: CacheKey {
        CacheKey(
            name: name.withUnsafeBufferPointer { Array($0) }, type: type, dnsClass: dnsClass, dnssecOK: dnssecOK,
            checkingDisabled: checkingDisabled, digest: digest)
    }

    private init(
        name: [UInt8], type: UInt16, dnsClass: UInt16, dnssecOK: Bool, checkingDisabled: Bool, digest: UInt64
    ) {
        self.name = name
        self.type = type
        self.dnsClass = dnsClass
        self.dnssecOK = dnssecOK
        self.checkingDisabled = checkingDisabled
        self.digest = digest
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(digest) }

    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        lhs.digest == rhs.digest && lhs.type == rhs.type && lhs.dnsClass == rhs.dnsClass && lhs.dnssecOK == rhs.dnssecOK
            && lhs.checkingDisabled == rhs.checkingDisabled && lhs.name == rhs.name
    }
}

/// One upstream answer as cached: the message without OPT and with ID 0, its TTLs
/// already clamped, and what inspection needs, worked out once when it is stored.
public final class CacheEntry: Sendable {
    /// The response bytes (no OPT record; ID 0), and where its TTL fields are.
    public let response: [UInt8]
    let ttlOffsets: [Int]
    /// The same without the HTTPS/SVCB `ech` parameter, when the response had one.
    public let withoutECH: [UInt8]?
    let withoutECHTTLOffsets: [Int]
    /// When it was stored, monotonic milliseconds.
    public let storedAt: Int64
    /// Seconds it stays fresh.
    public let ttl: UInt32
    /// The names the answer's CNAME chain reaches from the question name (docs/dns.md#answer-inspection).
    public let chain: [DomainName]
    public let rcode: DNSRcode
    /// `response[12..<questionEnd]` is the question.
    public let questionEnd: Int

    init(
        response: [UInt8], withoutECH: [UInt8]?, storedAt: Int64, ttl: UInt32, chain: [DomainName], rcode: DNSRcode,
        questionEnd: Int
    ) {
        self.response = response
        self.withoutECH = withoutECH
        ttlOffsets = Self.ttlOffsets(response)
        withoutECHTTLOffsets = withoutECH.map(Self.ttlOffsets) ?? []
        self.storedAt = storedAt
        self.ttl = ttl
        self.chain = chain
        self.rcode = rcode
        self.questionEnd = questionEnd
    }

    /// Prepares an upstream reply for caching and answering: clamps TTLs, drops OPT,
    /// finds the CNAME chain and the ECH-free variant. Nil for what must not be cached or
    /// served as an answer (not NOERROR/NXDOMAIN, truncated, malformed). A `ttl` of 0
    /// means "answer with it, do not cache it".
    public static func make(from reply: [UInt8], now: Int64, minTTL: UInt32, maxTTL: UInt32) -> CacheEntry? {
        guard var message = try? DNSMessage.parse(reply), !message.header.isTruncated,
            message.rcode == .noError || message.rcode == .nxDomain, message.questions.count == 1
        else { return nil }
        message.edns = nil
        message.header.id = 0
        let clamp = { (ttl: UInt32) in min(max(ttl > 0x7FFF_FFFF ? 0 : ttl, minTTL), maxTTL) }
        message.answers = message.answers.map {
            var record = $0
            record.ttl = clamp(record.ttl)
            return record
        }
        message.authorities = message.authorities.map {
            var record = $0
            record.ttl = clamp(record.ttl)
            return record
        }
        message.additionals = message.additionals.map {
            var record = $0
            record.ttl = clamp(record.ttl)
            return record
        }
        let isNegative = message.rcode == .nxDomain || message.answers.isEmpty
        let ttl: UInt32
        if isNegative {
            // RFC 2308: without an SOA a negative answer is passed on but not cached.
            ttl = message.negativeCacheTTL.map(clamp) ?? 0
        } else {
            ttl = message.answers.map(\.ttl).min() ?? 0
        }
        let response = message.serialized(compress: true)
        var stripped: [UInt8]?
        if message.answers.contains(where: { $0.type == .https || $0.type == .svcb }) {
            stripped = (try? DNSPacket.removingECH(from: response)) ?? nil
        }
        let questionEnd = DNSHeader.byteCount + message.questions[0].name.wire.count + 4
        return CacheEntry(
            response: response, withoutECH: stripped, storedAt: now, ttl: ttl,
            chain: cnameChain(message), rcode: message.rcode, questionEnd: questionEnd)
    }

    /// Where the TTL fields of every record but OPT are, so serving a cached answer ages
    /// them in place without walking the message again.
    static func ttlOffsets(_ packet: [UInt8]) -> [Int] {
        guard var cursor = try? DNSRecordCursor(packet) else { return [] }
        var offsets: [Int] = []
        while let record = try? cursor.next(in: packet) {
            if record.type != .opt { offsets.append(record.ttlOffset) }
        }
        return offsets
    }

    /// The names reached by following CNAMEs from the question name, in order. Bounded
    /// by the answer's length, so a CNAME loop ends.
    static func cnameChain(_ message: DNSMessage) -> [DomainName] {
        var current = message.questions[0].name.lowercased()
        var chain: [DomainName] = []
        for _ in 0..<message.answers.count {
            guard let record = message.answers.first(where: { $0.type == .cname && $0.name.lowercased() == current }),
                let target = record.rdata.cnameTarget
            else { break }
            current = target.lowercased()
            if let name = DomainName(wire: current.wire) { chain.append(name) }
        }
        return chain
    }
}
