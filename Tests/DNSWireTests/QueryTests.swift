import DNSWire
import Testing

@Suite("Hot path: DNSQuery and responses")
struct QueryTests {
    @Test(arguments: Captured.all)
    func parsesEveryCapturedQuery(exchange: CapturedExchange) throws {
        let query = try DNSQuery.parse(exchange.query)
        let full = try DNSMessage.parse(exchange.query)
        #expect(query.header == full.header)
        #expect(query.question == full.questions[0])
        #expect(query.edns == full.edns)
        #expect(query.questionEnd == 12 + query.question.name.wire.count + 4)
    }

    @Test func questionCountMustBeOne() {
        #expect(thrown { try DNSQuery.parse(header(qd: 0)) } == .questionCount(0))
        let two = header(qd: 2) + question(wire("a")) + question(wire("b"))
        #expect(thrown { try DNSQuery.parse(two) } == .questionCount(2))
        // Checked before the counts, so even an absurd count gets this answer.
        #expect(thrown { try DNSQuery.parse(header(qd: 65535)) } == .questionCount(65535))
    }

    @Test func otherRecordsAreWalkedButNotKept() throws {
        // A query carrying an answer record (e.g. a NOTIFY-style SOA) and a TSIG-like record.
        let packet =
            header(an: 1, ar: 2) + question(wire("example.test"))
            + rr([0xC0, 12], type: 6, rdata: wire("ns") + wire("host") + [UInt8](repeating: 0, count: 20))
            + optRR(payload: 4096, ttl: 0x0000_8000)
            + rr(wire("key"), type: 250, dnsClass: 255, ttl: 0, rdata: [1, 2, 3])
        let query = try DNSQuery.parse(packet)
        #expect(query.edns?.udpPayloadSize == 4096 && query.edns?.dnssecOK == true)
        // And a bad name in a record it does not keep is still caught.
        let bad = header(an: 1) + question(wire("a")) + rr([0xC0, 40], type: 1, rdata: [1, 2, 3, 4])
        #expect(thrown { try DNSQuery.parse(bad) } == .pointerOutOfBounds(offset: 19))
    }

    @Test func matchesTheQuestionOfAnUpstreamReply() throws {
        for exchange in Captured.all {
            #expect(try DNSQuery.parse(exchange.query).matchesQuestion(in: exchange.response), "\(exchange.label)")
        }
        let query = try DNSQuery.parse(Captured.a.query)
        #expect(!query.matchesQuestion(in: Captured.mx.response))  // same name, other type
        #expect(!query.matchesQuestion(in: Captured.cname.response))  // other name
        var upper = Captured.a.response
        upper[13] = 0x45  // "Example": case does not matter
        #expect(query.matchesQuestion(in: upper))
        var otherClass = Captured.a.response
        otherClass[12 + 14 + 3] = 3
        #expect(!query.matchesQuestion(in: otherClass))
        #expect(!query.matchesQuestion(in: Array(Captured.a.response.prefix(20))))
        #expect(!query.matchesQuestion(in: header(qd: 0) + question(wire("example.test"))))
    }

    @Test func udpResponseLimit() throws {
        var query = try DNSQuery.parse(Captured.a.query)
        #expect(query.udpResponseLimit() == 1232)
        #expect(query.udpResponseLimit(serverLimit: 4096) == 1232)
        query.edns?.udpPayloadSize = 100
        #expect(query.udpResponseLimit() == 512)
        query.edns = nil
        #expect(query.udpResponseLimit(serverLimit: 4096) == 512)
    }

    /// A block answer as docs/dns.md#blocked-names describes it: NXDOMAIN, a synthetic SOA whose minimum is
    /// the block TTL, and EDE 15 with the reason, because the client sent EDNS.
    @Test func buildsABlockAnswer() throws {
        let packet = Captured.cname.query  // www.example.test A, RD clear, AD set, EDNS
        let query = try DNSQuery.parse(packet)
        var edns = EDNS(udpPayloadSize: 1232)
        edns.addExtendedError(ExtendedDNSError(code: .blocked, text: "ads"))
        var writer = DNSMessageWriter(responseTo: query, rcode: .nxDomain, edns: query.edns == nil ? nil : edns)
        let soa = RData.SOA(
            mname: name("phosra-gate.invalid"), rname: name("hostmaster.phosra-gate.invalid"),
            serial: 1, refresh: 3600, retry: 600, expire: 86400, minimum: 10)
        writer.addRecord(ResourceRecord(name: name("www.example.test"), ttl: 10, rdata: .soa(soa)), to: .authority)
        let bytes = writer.finish(maxSize: query.udpResponseLimit())

        #expect(
            bytes
                == hex(
                    "3772 8083 0001 0000 0001 0001"  // id; QR, RA, NXDOMAIN (RD clear as in the query)
                        + " 03777777076578616d706c6504746573740000010001"  // the question, as sent
                        + " c00c 0006 0001 0000000a 0036"  // SOA owner → question name, TTL 10
                        + " 0b70686f737261 2d67617465 07696e76616c6964 00"  // phosra-gate.invalid
                        + " 0a686f73746d6173746572 c02e"  // hostmaster + pointer to phosra-gate.invalid
                        + " 00000001 00000e10 00000258 00015180 0000000a"
                        + " 00 0029 04d0 00000000 0009 000f 0005 000f 616473"))  // OPT with EDE 15 "ads"
        let parsed = try DNSMessage.parse(bytes)
        #expect(parsed.rcode == .nxDomain && parsed.header.isResponse && parsed.header.recursionAvailable)
        #expect(!parsed.header.recursionDesired && !parsed.header.authenticData)
        #expect(try parsed.edns?.extendedErrors() == [ExtendedDNSError(code: .blocked, text: "ads")])
        #expect(parsed.negativeCacheTTL == 10)
    }

    @Test func nullBlockAnswersAndSkeletons() throws {
        let query = try DNSQuery.parse(sampleQuery("Ads.Example.COM", type: 28))
        var writer = DNSMessageWriter(responseTo: query)
        writer.addRecord(
            ResourceRecord(name: query.question.name, ttl: 10, rdata: .aaaa(.init(high: 0, low: 0))), to: .answer)
        let parsed = try DNSMessage.parse(writer.finish())
        #expect(parsed.questions[0].name.wire == wire("Ads.Example.COM"))  // case echoed exactly
        #expect(parsed.answers[0].rdata.ipv6?.description == "::")
        #expect(parsed.header.id == 0x1234 && parsed.header.recursionDesired)

        let skeleton = DNSMessage(responseTo: query, rcode: .refused)
        #expect(skeleton.questions == [query.question] && skeleton.rcode == .refused && skeleton.header.isResponse)
        let fromMessage = DNSMessage(responseTo: try DNSMessage.parse(sampleQuery()), rcode: .servFail)
        #expect(fromMessage.rcode == .servFail && fromMessage.questions.count == 1 && fromMessage.edns == nil)
    }
}
