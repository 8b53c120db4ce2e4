import DNSWire
import Testing

@Suite("Truncation to a UDP limit (RFC 2181 §9, RFC 6891 §7)")
struct TruncationTests {
    /// A response with `count` A records for big.example, an NS in authority, glue, and OPT
    /// with an Extended DNS Error.
    static func bigResponse(count: Int, leadingCNAME: Bool = false) -> DNSMessage {
        var message = DNSMessage(header: DNSHeader(id: 77, flags: 0x8180))
        message.questions = [DNSQuestion(name: name("big.example"), type: .a)]
        if leadingCNAME {
            message.answers.append(
                ResourceRecord(name: name("big.example"), ttl: 60, rdata: .cname(name("pool.big.example"))))
        }
        let owner = name(leadingCNAME ? "pool.big.example" : "big.example")
        for index in 0..<count {
            message.answers.append(
                ResourceRecord(name: owner, ttl: 60, rdata: .a(.init(10, 0, UInt8(index / 256), UInt8(index % 256)))))
        }
        message.authorities = [ResourceRecord(name: name("big.example"), ttl: 60, rdata: .ns(name("ns.big.example")))]
        message.additionals = [ResourceRecord(name: name("ns.big.example"), ttl: 60, rdata: .a(.init(10, 9, 9, 9)))]
        var edns = EDNS()
        edns.addExtendedError(ExtendedDNSError(code: .other, text: "kept after truncation"))
        message.edns = edns
        return message
    }

    @Test func dropsAnRRsetThatDoesNotFitWholeAndKeepsOPT() throws {
        let full = Self.bigResponse(count: 40).serialized()
        #expect(full.count > 512)
        let cut = try DNSPacket.truncated(full, maxSize: 512)
        #expect(cut.count <= 512)
        let message = try DNSMessage.parse(cut)
        #expect(message.header.isTruncated)
        #expect(message.header.id == 77 && message.questions.count == 1)
        #expect(message.answers.isEmpty && message.authorities.isEmpty && message.additionals.isEmpty)
        #expect(try message.edns?.extendedErrors().first?.text == "kept after truncation")
        // The cut is a prefix of the original plus the original OPT bytes.
        let opt = message.edns!.wireLength
        #expect(cut[12..<(cut.count - opt)] == full[12..<(cut.count - opt)])
    }

    @Test func keepsWholeRRsetsBeforeTheOneThatDoesNotFit() throws {
        let full = Self.bigResponse(count: 40, leadingCNAME: true).serialized()
        let message = try DNSMessage.parse(try DNSPacket.truncated(full, maxSize: 512))
        #expect(message.header.isTruncated)
        #expect(message.answers.map(\.type) == [.cname])
        #expect(message.edns != nil)
    }

    @Test func droppingOnlyAdditionalRecordsDoesNotSetTC() throws {
        var big = Self.bigResponse(count: 2)
        for index in 0..<30 {
            big.additionals.append(
                ResourceRecord(
                    name: name("glue\(index).big.example"), ttl: 60, rdata: .a(.init(10, 1, 1, UInt8(index)))))
        }
        let full = big.serialized()
        #expect(full.count > 512)
        let message = try DNSMessage.parse(try DNSPacket.truncated(full, maxSize: 512))
        #expect(!message.header.isTruncated)
        #expect(message.answers.count == 2 && message.authorities.count == 1)
        #expect(message.additionals.count > 0 && message.additionals.count < 31)
        #expect(message.edns != nil)
    }

    @Test func aMessageThatFitsIsReturnedAsItIs() throws {
        #expect(try DNSPacket.truncated(Captured.a.response, maxSize: 512) == Captured.a.response)
        #expect(try DNSPacket.truncated(Captured.a.response, maxSize: Captured.a.response.count) == Captured.a.response)
    }

    @Test func opTInTheMiddleIsMovedLast() throws {
        let packet =
            header(flags: 0x8180, an: 1, ar: 3) + question(wire("a.example"))
            + rr([0xC0, 12], type: 16, rdata: [UInt8](repeating: 0x41, count: 200))
            + rr(wire("x.example"), type: 1, rdata: [1, 1, 1, 1]) + optRR(options: u16(12) + u16(4) + [0, 0, 0, 0])
            + rr(wire("y.example"), type: 1, rdata: [UInt8](repeating: 2, count: 4))
        let cut = try DNSPacket.truncated(packet, maxSize: 260)
        #expect(cut.count <= 260)
        let message = try DNSMessage.parse(cut)
        #expect(message.answers.count == 1 && !message.header.isTruncated)
        #expect(message.edns?.options == [EDNSOption(code: .padding, data: [0, 0, 0, 0])])
        #expect(Array(cut.suffix(message.edns!.wireLength)) == optRR(options: u16(12) + u16(4) + [0, 0, 0, 0]))
    }

    @Test func tinyLimitsKeepTheHeader() throws {
        let full = Self.bigResponse(count: 3).serialized()
        let questionEnd = 12 + wire("big.example").count + 4
        let noOPT = try DNSMessage.parse(try DNSPacket.truncated(full, maxSize: questionEnd + 5))
        #expect(noOPT.edns == nil && noOPT.questions.count == 1 && noOPT.header.isTruncated)
        let headerOnly = try DNSPacket.truncated(full, maxSize: 20)
        #expect(headerOnly.count == 12)
        let header = try DNSHeader(headerOnly)
        #expect(header.isTruncated && header.questionCount == 0 && header.id == 77)
    }

    @Test(arguments: Captured.all)
    func everyLimitGivesAValidMessageWithinTheLimit(exchange: CapturedExchange) throws {
        let packet = exchange.response
        for limit in 12...packet.count {
            let cut = try DNSPacket.truncated(packet, maxSize: limit)
            #expect(cut.count <= limit)
            let message = try DNSMessage.parse(cut)
            if cut.count < packet.count, message.answers.count < (try DNSHeader(packet)).answerCount {
                #expect(message.header.isTruncated)
            }
        }
    }

    @Test func writerFinishTruncates() throws {
        let message = Self.bigResponse(count: 40)
        let bytes = message.serialized(maxSize: 512)
        #expect(bytes.count <= 512)
        #expect(try DNSHeader(bytes).isTruncated)
        var writer = DNSMessageWriter(header: message.header, edns: message.edns)
        writer.addQuestion(message.questions[0])
        for record in message.answers { writer.addRecord(record, to: .answer) }
        #expect(writer.byteCount > 512)
        #expect(writer.finish(maxSize: 512) == bytes)
    }
}
