import DNSWire
import Testing

/// docs/dns.md#hostile-input: a packet whose header cannot be read is dropped; one that cannot be parsed,
/// or has a question count other than one, gets FORMERR; compression loops and
/// out-of-bounds pointers are rejected; responses are dropped; an unknown opcode gets
/// NOTIMP; nothing a client sends can crash the process.
@Suite("Bad input (docs/dns.md#hostile-input)")
struct MalformedTests {
    /// Every proper prefix of every real message is an error, never a crash, on every entry point.
    @Test(arguments: Captured.all)
    func truncatedAtEveryOffsetIsAnError(exchange: CapturedExchange) {
        for packet in [exchange.query, exchange.response] {
            for length in 0..<packet.count {
                let prefix = Array(packet.prefix(length))
                #expect(thrown { try DNSMessage.parse(prefix) } != nil, "length \(length)")
                #expect(thrown { try DNSQuery.parse(prefix) } != nil, "length \(length)")
                #expect(thrown { try DNSPacket.minimumTTL(in: prefix) } != nil, "length \(length)")
                var copy = prefix
                #expect(thrown { try DNSPacket.decrementTTLs(in: &copy, by: 1) } != nil, "length \(length)")
                #expect(copy == prefix)
                #expect(thrown { try DNSPacket.truncated(prefix, maxSize: 0) } != nil || length <= 12)
            }
        }
    }

    @Test func theProxysLayersInOrder() throws {
        // 1. Header unreadable: drop.
        #expect(thrown { try DNSHeader([0x12, 0x34, 0x01]) } == .shortHeader(length: 3))
        // 2. A response arriving at the server: readable, flagged, dropped by the caller.
        #expect(try DNSHeader(Captured.a.response).isResponse)
        // 3. Unknown opcode: NOTIMP from the header alone, whatever follows.
        var opcode = try DNSHeader(header(flags: 0x7900))
        #expect(opcode.opcode == DNSOpcode(15))
        opcode = try DNSHeader(DNSPacket.errorResponse(to: opcode, rcode: .notImp))
        #expect(opcode.rcode == .notImp && opcode.opcode == DNSOpcode(15) && opcode.isResponse)
        // 4. Question count other than one, or any parse error: FORMERR.
        let formErr = DNSPacket.errorResponse(to: try DNSHeader(header(qd: 2)), rcode: .formErr)
        #expect(try DNSHeader(formErr).rcode == .formErr)
    }

    @Test func everyErrorHasALogLine() {
        let all: [DNSWireError] = [
            .shortHeader(length: 3), .countTooLarge(section: .answer, count: 9), .questionCount(2),
            .truncated(section: .authority, offset: 40), .trailingBytes(offset: 50),
            .rdataLength(type: .a, offset: 30), .labelTooLong(offset: 12), .nameTooLong(offset: 12),
            .badLabelType(offset: 12), .pointerLoop(offset: 14), .pointerForward(offset: 12),
            .pointerOutOfBounds(offset: 12), .tooManyPointers(offset: 15), .compressedName(offset: 20),
            .emptyLabel(offset: 2), .badEscape(offset: 1), .multipleOPT(offset: 30), .optNotRoot(offset: 19),
            .optOutsideAdditional(section: .answer), .badEDNSOption(offset: 30), .badExtendedError(length: 1),
            .badSvcParams(reason: .keyOrder(key: 1, offset: 9)),
        ]
        #expect(Set(all.map(\.description)).count == all.count)
        #expect(
            DNSWireError.truncated(section: .authority, offset: 40).description
                == "message ends inside the authority section at byte 40")
        #expect(
            DNSWireError.rdataLength(type: .aaaa, offset: 30).description
                == "AAAA rdata at byte 30 has the wrong length")
    }
}
