import DNSWire
import Testing

@Suite("Header (RFC 1035 §4.1.1)")
struct HeaderTests {
    @Test func readsEveryFieldOfARealQueryAndResponse() throws {
        let query = try DNSHeader(Captured.a.query)
        #expect(query.id == 0x6385)
        #expect(!query.isResponse)
        #expect(query.opcode == .query)
        #expect(!query.recursionDesired)  // dig +norec
        #expect(query.authenticData)  // dig sets AD by default
        #expect(query.questionCount == 1 && query.answerCount == 0 && query.additionalCount == 1)

        let response = try DNSHeader(Captured.a.response)
        #expect(response.isResponse && response.isAuthoritative && !response.isTruncated)
        #expect(response.rcode == .noError)
        #expect((response.answerCount, response.authorityCount, response.additionalCount) == (1, 2, 3))

        let negative = try DNSHeader(Captured.nxdomain.response)
        #expect(negative.rcode == .nxDomain)
    }

    @Test func flagSettersTouchOnlyTheirBits() {
        var header = DNSHeader(flags: 0x0040)  // the Z bit, which must survive
        header.isResponse = true
        header.opcode = .update
        header.isAuthoritative = true
        header.isTruncated = true
        header.recursionDesired = true
        header.recursionAvailable = true
        header.authenticData = true
        header.checkingDisabled = true
        header.rcode = .refused
        #expect(header.flags == 0x8000 | 5 << 11 | 0x0400 | 0x0200 | 0x0100 | 0x0080 | 0x0040 | 0x0020 | 0x0010 | 5)
        header.opcode = .query
        header.isTruncated = false
        header.rcode = .noError
        #expect(header.flags == 0x8000 | 0x0400 | 0x0100 | 0x0080 | 0x0040 | 0x0020 | 0x0010)
        #expect(header.opcode == .query && !header.isTruncated && header.rcode == .noError)
    }

    @Test(arguments: 0..<12)
    func shorterThanTwelveBytesIsShortHeader(length: Int) {
        let packet = Array(Captured.a.query.prefix(length))
        #expect(thrown { try DNSHeader(packet) } == .shortHeader(length: length))
        #expect(thrown { try DNSQuery.parse(packet) } == .shortHeader(length: length))
        #expect(thrown { try DNSMessage.parse(packet) } == .shortHeader(length: length))
    }

    @Test func setOverwritesOnlyTheHeader() throws {
        var packet = Captured.a.response
        var header = try DNSHeader(packet)
        header.id = 0xBEEF
        try header.set(in: &packet)
        #expect(Array(packet.prefix(2)) == [0xBE, 0xEF])
        #expect(packet[2...] == Captured.a.response[2...])
        var short: [UInt8] = [1, 2, 3]
        #expect(thrown { try header.set(in: &short) } == .shortHeader(length: 3))
    }

    @Test func countsThatCannotFitAreRejectedBeforeParsing() {
        // docs/dns.md#hostile-input: qdcount 65535 in a 30-byte packet.
        var packet = header(qd: 65535) + question(wire("a.example"))
        packet += [UInt8](repeating: 0, count: 30 - packet.count)
        #expect(packet.count == 30)
        #expect(thrown { try DNSMessage.parse(packet) } == .countTooLarge(section: .question, count: 65535))
        #expect(thrown { try DNSRecordCursor(packet) } == .countTooLarge(section: .question, count: 65535))

        let answers = header(an: 3) + question(wire("a"))
        #expect(thrown { try DNSMessage.parse(answers) } == .countTooLarge(section: .answer, count: 3))
        let authority = header(ns: 1) + question(wire("a"))
        #expect(thrown { try DNSMessage.parse(authority) } == .countTooLarge(section: .authority, count: 1))
        let additional = header(ar: 9) + question(wire("a"))
        #expect(thrown { try DNSQuery.parse(additional) } == .countTooLarge(section: .additional, count: 9))
    }

    @Test func errorResponseCopiesWhatRFC1035Says() throws {
        var query = DNSHeader(id: 0x4242, questionCount: 1)
        query.opcode = .status
        query.recursionDesired = true
        query.checkingDisabled = true
        query.authenticData = true
        let bytes = DNSPacket.errorResponse(to: query, rcode: .notImp)
        #expect(bytes == hex("4242 9194 0000 0000 0000 0000"))
        let response = try DNSHeader(bytes)
        #expect(response.id == 0x4242 && response.isResponse && response.opcode == .status)
        #expect(response.recursionDesired && response.recursionAvailable && response.checkingDisabled)
        #expect(!response.authenticData && response.rcode == .notImp)
    }

    @Test func packetEditsInPlace() throws {
        var packet = Captured.nxdomain.response
        try DNSPacket.setID(0x0102, in: &packet)
        try DNSPacket.setRcode(.servFail, in: &packet)
        let header = try DNSHeader(packet)
        #expect(header.id == 0x0102 && header.rcode == .servFail && header.isAuthoritative)
        #expect(packet[4...] == Captured.nxdomain.response[4...])
        var short: [UInt8] = []
        #expect(thrown { try DNSPacket.setID(1, in: &short) } == .shortHeader(length: 0))
        #expect(thrown { try DNSPacket.setRcode(.formErr, in: &short) } == .shortHeader(length: 0))
    }

    @Test func codeDescriptionsForLogs() {
        #expect(DNSType.https.description == "HTTPS" && DNSType(4321).description == "TYPE4321")
        #expect(DNSClass.in.description == "IN" && DNSClass(42).description == "CLASS42")
        #expect(DNSRcode.nxDomain.description == "NXDOMAIN" && DNSRcode.badVers.description == "BADVERS")
        #expect(DNSRcode(99).description == "RCODE99")
        #expect(DNSOpcode.notify.description == "NOTIFY" && DNSOpcode(9).description == "OPCODE9")
        #expect(DNSType.any.rawValue == 255 && DNSType.svcb.rawValue == 64 && DNSType.dname.rawValue == 39)
    }
}
