/// The hot-path view of a client query: header, the single question, and EDNS, without
/// materialising any other record.
///
/// Intended order in the proxy (docs/dns.md#hostile-input, docs/ARCHITECTURE.md#house-habits (4)), cheapest first:
/// 1. `DNSHeader(packet)` — fails only for < 12 bytes: drop the packet;
/// 2. QR set: drop; opcode not QUERY: NOTIMP via `DNSPacket.errorResponse`;
/// 3. `DNSQuery.parse(packet)` — any error: FORMERR via `DNSPacket.errorResponse`;
/// 4. access list, rate limit, policy: answer with `DNSMessageWriter(responseTo:)`.
///
/// Allocation: the question name (one array), and when the client sent EDNS options, one
/// array for the list and one per option. The packet is not retained.
public struct DNSQuery: Hashable, Sendable {
    public var header: DNSHeader
    public var question: DNSQuestion
    /// `packet[12..<questionEnd]` is the question exactly as the client wrote it, e.g. to
    /// compare with the question an upstream echoes back.
    public var questionEnd: Int
    /// The client's OPT record, if it sent one. Its `version` is not checked here: a
    /// version above 0 deserves BADVERS (RFC 6891 §6.1.3), which is the caller's answer.
    public var edns: EDNS?

    public init(header: DNSHeader, question: DNSQuestion, questionEnd: Int, edns: EDNS?) {
        self.header = header
        self.question = question
        self.questionEnd = questionEnd
        self.edns = edns
    }

    /// Parses a query that must have exactly one question (`.questionCount` otherwise).
    /// The other records are walked with every name rule but not decoded, except OPT,
    /// which must be unique, in the additional section, and owned by the root.
    public static func parse(_ packet: [UInt8]) throws(DNSWireError) -> DNSQuery {
        var reader = DNSReader(packet)
        let header = try reader.readHeader()
        guard header.questionCount == 1 else { throw .questionCount(Int(header.questionCount)) }
        try header.validateCounts(packetLength: packet.count)
        let question = try reader.readQuestion()
        var cursor = DNSRecordCursor(header: header, questionsEnd: reader.readerIndex)
        var edns: EDNS?
        while let record = try cursor.next(in: packet) {
            guard record.type == .opt else { continue }
            try EDNS.checkPlacement(
                section: record.section, offset: record.offset, ownerIsRoot: packet[record.offset] == 0,
                alreadySeen: edns != nil)
            var optionReader = DNSReader(packet, readerIndex: record.rdataRange.lowerBound)
            optionReader.section = .additional
            let options = try optionReader.readEDNSOptions(length: record.rdataRange.count)
            edns = EDNS(payloadSize: record.dnsClass.rawValue, ttlField: record.ttl, options: options)
        }
        return DNSQuery(header: header, question: question, questionEnd: reader.readerIndex, edns: edns)
    }

    /// Whether `reply` asks exactly this query's question, the check docs/dns.md#forwarding makes before
    /// accepting an upstream answer (the ID is compared separately). The name is compared
    /// ignoring ASCII case, type and class exactly. Reads the reply's question bytes in
    /// place, allocating nothing; a question name at offset 12 can never be compressed (a
    /// pointer there has nowhere valid to point), so a byte comparison is exact.
    public func matchesQuestion(in reply: [UInt8]) -> Bool {
        let wire = question.name.wire
        let typeOffset = DNSHeader.byteCount + wire.count
        guard reply.count >= typeOffset + 4, reply[4] == 0, reply[5] == 1 else { return false }
        for index in 0..<wire.count where asciiLower(reply[DNSHeader.byteCount + index]) != asciiLower(wire[index]) {
            return false
        }
        return reply[typeOffset] == UInt8(question.type.rawValue >> 8)
            && reply[typeOffset + 1] == UInt8(question.type.rawValue & 0xFF)
            && reply[typeOffset + 2] == UInt8(question.dnsClass.rawValue >> 8)
            && reply[typeOffset + 3] == UInt8(question.dnsClass.rawValue & 0xFF)
    }

    /// The UDP size the response may use: the client's EDNS payload size (at least 512,
    /// RFC 6891 §6.2.5) capped by `serverLimit`, or 512 without EDNS (RFC 1035 §4.2.1).
    public func udpResponseLimit(serverLimit: Int = 1232) -> Int {
        guard let edns else { return 512 }
        return min(max(Int(edns.udpPayloadSize), 512), max(serverLimit, 512))
    }

    /// The largest answer to this query: the UDP limit over UDP, and over TCP what a
    /// message's two-byte length can say (RFC 1035 §4.2.2).
    public func responseLimit(overUDP: Bool) -> Int {
        overUDP ? udpResponseLimit() : 65_535
    }
}
