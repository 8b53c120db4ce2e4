import DNSWire
import DomainMatch
import Glibc

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
    let digest: UInt64

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

    public func hash(into hasher: inout Hasher) { hasher.combine(digest) }

    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        lhs.digest == rhs.digest && lhs.type == rhs.type && lhs.dnsClass == rhs.dnsClass && lhs.dnssecOK == rhs.dnssecOK
            && lhs.checkingDisabled == rhs.checkingDisabled && lhs.name == rhs.name
    }
}

/// One upstream answer as cached: the message without OPT and with ID 0, its question
/// lowercased, its TTLs already clamped, and what inspection needs, worked out once when
/// it is stored.
///
/// Small on purpose: a gateway keeps up to `cache_size` of them (100,000 by default). Its
/// question is its cache key's name, so the cache keeps no copy of that name.
public final class CacheEntry: Sendable {
    /// The response bytes (no OPT record; ID 0; question name lowercased).
    public let response: [UInt8]
    /// The same without the HTTPS/SVCB `ech` parameter, when the response had one.
    let stripped: Stripped?
    /// The names the answer's CNAME chain reaches from the question name (docs/dns.md#answer-inspection).
    public let chain: [DomainName]
    /// What is decided again each time it is served (docs/dns.md#what-answers-may-carry);
    /// nil for most answers.
    let screening: AnswerScreening?
    /// When it was stored, monotonic milliseconds.
    public let storedAt: Int64
    let ttlOffsets: TTLOffsets
    /// Seconds it stays fresh.
    public let ttl: UInt32
    public let rcode: DNSRcode
    private let questionLength: UInt16

    /// The variant of a response whose HTTPS/SVCB records carried `ech`; rare, so boxed.
    final class Stripped: Sendable {
        let response: [UInt8]
        let ttlOffsets: TTLOffsets

        init(_ response: [UInt8]) {
            self.response = response
            ttlOffsets = TTLOffsets(response)
        }
    }

    public var withoutECH: [UInt8]? { stripped?.response }

    /// `response[12..<questionEnd]` is the question.
    public var questionEnd: Int { DNSHeader.byteCount + Int(questionLength) }

    init(
        response: [UInt8], withoutECH: [UInt8]?, storedAt: Int64, ttl: UInt32, chain: [DomainName], rcode: DNSRcode,
        screening: AnswerScreening? = nil
    ) {
        var response = response
        Self.lowercaseQuestion(&response)
        self.response = response
        ttlOffsets = TTLOffsets(response)
        stripped = withoutECH.map {
            var bytes = $0
            Self.lowercaseQuestion(&bytes)
            // Without `ech` the record is no longer the one its zone signed: not authentic
            // (RFC 4035 §3.2.3).
            if bytes.count >= DNSHeader.byteCount { bytes[3] &= ~0x20 }
            return Stripped(bytes)
        }
        self.storedAt = storedAt
        self.ttl = ttl
        self.chain = chain
        self.rcode = rcode
        self.screening = screening
        var index = DNSHeader.byteCount
        while index < response.count, response[index] != 0 { index += Int(response[index]) + 1 }
        questionLength = UInt16(truncatingIfNeeded: index + 5 - DNSHeader.byteCount)
    }

    /// Whether this is the answer to `key`'s question: its name byte for byte (the key's is
    /// lowercase, as the stored question is), its type and class.
    func answers(_ key: CacheKey) -> Bool {
        let end = DNSHeader.byteCount + key.name.count
        // A wire name ends with its root label, so equal bytes up to it are the same name.
        guard !key.name.isEmpty, response.count >= end + 4 else { return false }
        return response.withUnsafeBufferPointer { stored in
            key.name.withUnsafeBufferPointer { name in
                memcmp(stored.baseAddress! + DNSHeader.byteCount, name.baseAddress!, name.count) == 0
            }
        } && UInt16(response[end]) << 8 | UInt16(response[end + 1]) == key.type
            && UInt16(response[end + 2]) << 8 | UInt16(response[end + 3]) == key.dnsClass
    }

    /// The question's name folded to lowercase (length bytes are below "A" and stay), so
    /// that it is byte for byte the cache key's name, however the upstream cased it.
    private static func lowercaseQuestion(_ bytes: inout [UInt8]) {
        var index = DNSHeader.byteCount
        while index < bytes.count, bytes[index] != 0 {
            let end = min(bytes.count, index + 1 + Int(bytes[index]))
            for position in (index + 1)..<end where bytes[position] &- 0x41 < 26 { bytes[position] |= 0x20 }
            index = end
        }
    }

    /// Prepares an upstream reply for caching and answering: clamps TTLs, drops OPT and
    /// the answer records outside the question's chain, finds the CNAME chain, the ECH-free
    /// variant and what is screened per client (`rebinding` says which addresses are
    /// local). Nil for what must not be cached or served as an answer (not NOERROR/NXDOMAIN,
    /// truncated, malformed). A `ttl` of 0 means "answer with it, do not cache it".
    public static func make(
        from reply: [UInt8], now: Int64, minTTL: UInt32, maxTTL: UInt32, rebinding: RebindingGuard = RebindingGuard()
    ) -> CacheEntry? {
        guard var message = try? DNSMessage.parse(reply), !message.header.isTruncated,
            message.rcode == .noError || message.rcode == .nxDomain, message.questions.count == 1
        else { return nil }
        message.edns = nil
        let answers = message.answers.count
        AnswerScreening.keepChain(&message)
        // An answer with records taken out is one this server changed: AD is not passed
        // on for it (RFC 4035 §3.2.3, docs/dns.md#dnssec).
        if message.answers.count != answers { message.header.authenticData = false }
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
        return CacheEntry(
            response: response, withoutECH: stripped, storedAt: now, ttl: ttl, chain: cnameChain(message),
            rcode: message.rcode, screening: AnswerScreening.make(message, rebinding: rebinding))
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

/// Where the TTL fields of a cached response's records (all but OPT) are, so serving it
/// ages them in place without walking the message again. Up to four offsets (an answer
/// with its CNAMEs, most often) live in one word; more take an array.
struct TTLOffsets: Sendable {
    private let packed: UInt64
    private let more: [UInt16]
    private let stored: UInt16

    var count: Int { Int(stored) }

    init(_ packet: [UInt8]) {
        var offsets: [UInt16] = []
        if var cursor = try? DNSRecordCursor(packet) {
            while let record = try? cursor.next(in: packet) {
                if record.type != .opt { offsets.append(UInt16(truncatingIfNeeded: record.ttlOffset)) }
            }
        }
        stored = UInt16(truncatingIfNeeded: offsets.count)
        if offsets.count > 4 {
            packed = 0
            more = offsets
        } else {
            var word: UInt64 = 0
            for index in 0..<offsets.count { word |= UInt64(offsets[index]) << (16 * index) }
            packed = word
            more = []
        }
    }

    subscript(position: Int) -> Int {
        count > 4 ? Int(more[position]) : Int(truncatingIfNeeded: packed >> (16 * position) & 0xFFFF)
    }
}
