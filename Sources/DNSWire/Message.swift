/// A fully parsed message (RFC 1035 §4.1): header, the four sections, and EDNS.
///
/// For upstream answers that the proxy inspects or edits (CNAME chains, ECH removal,
/// synthesized answers). Queries on the hot path use `DNSQuery`, which materialises only
/// the question. The OPT record is lifted into `edns` and is not among `additionals`;
/// serializing puts it last in the additional section.
///
/// Allocation: one array per section, one per name, one per raw RDATA.
public struct DNSMessage: Hashable, Sendable {
    /// As parsed; the counts are rewritten by `serialized`, the flags kept.
    public var header: DNSHeader
    public var questions: [DNSQuestion]
    public var answers: [ResourceRecord]
    public var authorities: [ResourceRecord]
    public var additionals: [ResourceRecord]
    public var edns: EDNS?

    public init(
        header: DNSHeader, questions: [DNSQuestion] = [], answers: [ResourceRecord] = [],
        authorities: [ResourceRecord] = [], additionals: [ResourceRecord] = [], edns: EDNS? = nil
    ) {
        self.header = header
        self.questions = questions
        self.answers = answers
        self.authorities = authorities
        self.additionals = additionals
        self.edns = edns
    }

    /// The full 12-bit rcode: header bits plus the OPT's upper eight (RFC 6891 §6.1.3).
    /// Setting a value above 15 without EDNS adds a default OPT record, the only place the
    /// upper bits can go; setting one of 15 or less clears them.
    public var rcode: DNSRcode {
        get { DNSRcode(UInt16(edns?.rcodeHigh ?? 0) << 4 | header.rcode.rawValue) }
        set {
            header.rcode = DNSRcode(newValue.rawValue & 0x0F)
            let high = UInt8(truncatingIfNeeded: newValue.rawValue >> 4)
            if high != 0, edns == nil { edns = EDNS() }
            edns?.rcodeHigh = high
        }
    }

    /// Parses a whole message. Layers, cheapest first: header length, section counts
    /// against the packet length, then each question and record in order (names with
    /// every compression rule, RDATA confined to RDLENGTH), OPT placement, and finally no
    /// bytes left over. The first problem found is thrown; nothing traps.
    public static func parse(_ packet: [UInt8]) throws(DNSWireError) -> DNSMessage {
        var reader = DNSReader(packet)
        let header = try reader.readHeader()
        try header.validateCounts(packetLength: packet.count)
        var message = DNSMessage(header: header)
        message.questions = try reader.readQuestions(count: Int(header.questionCount))
        message.answers = try reader.readSection(.answer, count: header.answerCount, edns: &message.edns)
        message.authorities = try reader.readSection(.authority, count: header.authorityCount, edns: &message.edns)
        message.additionals = try reader.readSection(.additional, count: header.additionalCount, edns: &message.edns)
        guard reader.readerIndex == packet.count else { throw .trailingBytes(offset: reader.readerIndex) }
        return message
    }
}

extension DNSReader {
    /// Reads `count` records of one section, lifting an OPT record into `edns`. The OPT owner
    /// must be a literal root label: a pointer, even to a root label, is `.optNotRoot`.
    mutating func readSection(
        _ section: DNSSection, count: UInt16, edns: inout EDNS?
    ) throws(DNSWireError)
        -> [ResourceRecord]
    {
        self.section = section
        var records: [ResourceRecord] = []
        records.reserveCapacity(Int(count))
        for _ in 0..<count {
            let prefix = try readRecordPrefix()
            if prefix.type == .opt {
                try EDNS.checkPlacement(
                    section: section, offset: prefix.offset, ownerIsRoot: bytes[prefix.offset] == 0,
                    alreadySeen: edns != nil)
                let options = try readEDNSOptions(length: prefix.rdataLength)
                edns = EDNS(payloadSize: prefix.dnsClass.rawValue, ttlField: prefix.ttl, options: options)
                continue
            }
            let rdata = try readRData(type: prefix.type, dnsClass: prefix.dnsClass, length: prefix.rdataLength)
            records.append(ResourceRecord(name: prefix.name, dnsClass: prefix.dnsClass, ttl: prefix.ttl, rdata: rdata))
        }
        return records
    }
}
