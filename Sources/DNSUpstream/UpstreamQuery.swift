import DNSWire

/// The message sent upstream for one question, and the checks its reply must pass.
///
/// The query (docs/dns.md#forwarding): a fresh random ID per attempt (patched into a template built
/// once), RD=1, AD=1, CD copied from the client, EDNS0 with a 1232-byte payload (DNS Flag
/// Day 2020: no IP fragmentation) and DO copied. AD asks a validating upstream to say
/// whether it validated the answer, with or without DO (RFC 6840 §5.7); whether a client
/// sees that is decided when the answer is served. Pure; values only.
struct UpstreamQuery: Sendable {
    let question: DNSQuestion
    private let template: [UInt8]
    /// A stand-in client query, for `DNSQuery.matchesQuestion`.
    private let matcher: DNSQuery

    static let payloadSize: UInt16 = 1232

    init(question: DNSQuestion, dnssecOK: Bool, checkingDisabled: Bool) {
        self.question = question
        var header = DNSHeader(questionCount: 1)
        header.recursionDesired = true
        header.authenticData = true
        header.checkingDisabled = checkingDisabled
        var writer = DNSMessageWriter(header: header, edns: EDNS(udpPayloadSize: Self.payloadSize, dnssecOK: dnssecOK))
        writer.addQuestion(question)
        template = writer.finish()
        matcher = DNSQuery(header: header, question: question, questionEnd: 0, edns: nil)
    }

    /// The query with `id`.
    func message(id: UInt16) -> [UInt8] {
        var bytes = template
        bytes[0] = UInt8(truncatingIfNeeded: id >> 8)
        bytes[1] = UInt8(truncatingIfNeeded: id)
        return bytes
    }

    /// What to make of `reply` to the query sent with `id`. Checks run cheapest first;
    /// the first that fails names the mismatch, and a mismatching reply is dropped while
    /// the attempt keeps waiting (a forged reply must neither be used nor end the wait).
    func verdict(on reply: [UInt8], id: UInt16) -> ReplyVerdict {
        guard reply.count >= DNSHeader.byteCount else { return .mismatch(.tooShort) }
        guard UInt16(reply[0]) << 8 | UInt16(reply[1]) == id else { return .mismatch(.wrongID) }
        // QR set and opcode QUERY (bits 1–4 of byte 2 clear).
        guard reply[2] & 0x80 != 0, reply[2] & 0x78 == 0 else { return .mismatch(.notAResponse) }
        guard matcher.matchesQuestion(in: reply) else { return .mismatch(.wrongQuestion) }
        if reply[2] & 0x02 != 0 { return .truncated }
        let rcode = DNSRcode(UInt16(reply[3] & 0x0F))
        if rcode == .servFail || rcode == .refused { return .failover(rcode) }
        return .answer
    }

    /// A random query ID from the system CSPRNG (getrandom(2) on Linux): an off-path
    /// attacker must guess it together with the source port (RFC 5452 §9.2).
    static func randomID() -> UInt16 {
        var generator = SystemRandomNumberGenerator()
        return UInt16.random(in: .min ... .max, using: &generator)
    }
}

/// The outcome of checking one reply against its query.
enum ReplyVerdict: Equatable, Sendable {
    /// The answer (NOERROR, NXDOMAIN, … anything but the failover rcodes).
    case answer
    /// SERVFAIL or REFUSED: try the next upstream.
    case failover(DNSRcode)
    /// TC set: ask the same upstream again over TCP.
    case truncated
    /// Not a reply to this query: drop it and keep waiting.
    case mismatch(ReplyMismatch)
}

/// Why a reply was dropped.
enum ReplyMismatch: Equatable, Sendable {
    case tooShort
    case wrongID
    case notAResponse
    case wrongQuestion
}
