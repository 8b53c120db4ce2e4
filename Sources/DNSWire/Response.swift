// Response skeletons (RFC 1035 §4.1.1): what a server copies from the query into its answer.

extension DNSHeader {
    /// The header of a response to this query: ID, opcode, RD and CD copied (CD per
    /// RFC 6840 §5.9); QR and RA set (the proxy is a recursive service); AA, TC, AD clear;
    /// counts zero, to be filled by the writer.
    public func responseHeader(rcode: DNSRcode = .noError) -> DNSHeader {
        var header = DNSHeader(id: id)
        header.isResponse = true
        header.opcode = opcode
        header.recursionDesired = recursionDesired
        header.checkingDisabled = checkingDisabled
        header.recursionAvailable = true
        header.rcode = rcode
        return header
    }
}

extension DNSMessageWriter {
    /// Starts the response to `query`: the response header and the question exactly as the
    /// client sent it (same letter case, for clients that randomise it). EDNS is the
    /// caller's choice: RFC 6891 §7 allows OPT in the response only if the query had one.
    public init(responseTo query: DNSQuery, rcode: DNSRcode = .noError, edns: EDNS? = nil, capacity: Int = 512) {
        self.init(header: query.header.responseHeader(rcode: rcode), edns: edns, capacity: capacity)
        addQuestion(query.question)
    }

    /// The same, written over `storage` (`DNSWriter(reusing:)`).
    public init(
        responseTo query: DNSQuery, rcode: DNSRcode = .noError, edns: EDNS? = nil, reusing storage: consuming [UInt8]
    ) {
        self.init(header: query.header.responseHeader(rcode: rcode), edns: edns, reusing: consume storage)
        addQuestion(query.question)
    }
}

extension DNSMessage {
    /// The response skeleton for a parsed query message: response header, its questions.
    public init(responseTo query: DNSMessage, rcode: DNSRcode = .noError) {
        self.init(header: query.header.responseHeader(rcode: rcode), questions: query.questions)
    }

    /// The response skeleton for a hot-path query.
    public init(responseTo query: DNSQuery, rcode: DNSRcode = .noError) {
        self.init(header: query.header.responseHeader(rcode: rcode), questions: [query.question])
    }
}

extension DNSPacket {
    /// A 12-byte response carrying only a header, for queries whose question cannot be
    /// trusted: FORMERR for a message that does not parse, NOTIMP for an unknown opcode
    /// (docs/dns.md#hostile-input).
    public static func errorResponse(to query: DNSHeader, rcode: DNSRcode) -> [UInt8] {
        var writer = DNSWriter(capacity: DNSHeader.byteCount)
        writer.writeHeader(query.responseHeader(rcode: rcode))
        return writer.bytes
    }
}
