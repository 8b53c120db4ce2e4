import DNSWire
import Testing

@Suite("Whole messages: real answers from NSD")
struct MessageTests {
    @Test func aAnswerWithAuthorityAndGlue() throws {
        let message = try DNSMessage.parse(Captured.a.response)
        #expect(message.header.id == 0x6385 && message.rcode == .noError)
        #expect(message.questions == [DNSQuestion(name: name("example.test"), type: .a)])
        #expect(
            message.answers == [ResourceRecord(name: name("example.test"), ttl: 3600, rdata: .a(.init(192, 0, 2, 1)))])
        #expect(message.authorities.map(\.rdata) == [.ns(name("ns1.example.test")), .ns(name("ns2.example.test"))])
        #expect(message.additionals.map(\.rdata) == [.a(.init(192, 0, 2, 53)), .a(.init(192, 0, 2, 54))])
        #expect(message.edns == EDNS(udpPayloadSize: 1232))
    }

    @Test func cnameChain() throws {
        let message = try DNSMessage.parse(Captured.cname.response)
        #expect(message.answers.map(\.type) == [.cname, .a, .a])
        #expect(message.answers[0].rdata.cnameTarget == name("web.example.test"))
        #expect(message.answers[1].name == name("web.example.test"))
        #expect(message.answers.compactMap(\.rdata.ipv4).map(\.description) == ["192.0.2.80", "192.0.2.81"])
    }

    @Test func soaTxtSrvPtrAndNS() throws {
        let soa = try #require(try DNSMessage.parse(Captured.soa.response).answers.first?.rdata.soa)
        #expect(
            soa
                == RData.SOA(
                    mname: name("ns1.example.test"), rname: name("hostmaster.example.test"),
                    serial: 2_024_010_101, refresh: 7200, retry: 3600, expire: 1_209_600, minimum: 300))
        let txt = try DNSMessage.parse(Captured.txt.response).answers[0].rdata
        #expect(txt.txtStrings?.map { String(decoding: $0, as: UTF8.self) } == ["v=spf1 -all", "second string"])
        let srv = try DNSMessage.parse(Captured.srv.response).answers[0].rdata
        #expect(srv == .srv(.init(priority: 10, weight: 60, port: 5060, target: name("sip.example.test"))))
        let ptr = try DNSMessage.parse(Captured.ptr.response).answers[0].rdata
        #expect(ptr == .ptr(name("example.test")))
        let ns = try DNSMessage.parse(Captured.ns.response)
        #expect(ns.answers.count == 2 && ns.authorities.isEmpty && ns.additionals.count == 2)
    }

    @Test func dnameAndNXDOMAIN() throws {
        let message = try DNSMessage.parse(Captured.dname.response)
        #expect(message.rcode == .nxDomain)
        #expect(message.answers.map(\.rdata) == [.dname(name("example.test")), .cname(name("x.example.test"))])
        #expect(message.negativeCacheTTL == 300)
        let nx = try DNSMessage.parse(Captured.nxdomain.response)
        #expect(nx.rcode == .nxDomain && nx.answers.isEmpty && nx.authorities[0].type == .soa)
        #expect(nx.authorities[0].ttl == 300 && nx.negativeCacheTTL == 300)
        #expect(try DNSMessage.parse(Captured.a.response).negativeCacheTTL == nil)
    }

    @Test func svcbAndHTTPS() throws {
        let https = try DNSMessage.parse(Captured.https.response).answers[0]
        #expect(https.type == .https)
        #expect(https.rdata.svcb?.params.map(\.key) == [.alpn, .ipv4hint, .ech])
        let svcb = try DNSMessage.parse(Captured.svcb.response).answers[0]
        #expect(svcb.rdata.description == "16 svc.example.net. port=8443 ipv6hint=2001:db8::2")
    }

    /// Our compressor makes the same choices as NSD's for these answers, so writing the
    /// parsed message gives back the very bytes that came off the wire.
    @Test(arguments: Captured.all)
    func reserialisesByteForByte(exchange: CapturedExchange) throws {
        let message = try DNSMessage.parse(exchange.response)
        #expect(message.serialized() == exchange.response, "\(exchange.label)")
        let query = try DNSMessage.parse(exchange.query)
        #expect(query.serialized() == exchange.query, "\(exchange.label)")
    }

    @Test(arguments: Captured.all)
    func uncompressedOutputParsesToTheSameMessage(exchange: CapturedExchange) throws {
        let message = try DNSMessage.parse(exchange.response)
        let plain = message.serialized(compress: false)
        #expect(plain.count > exchange.response.count)
        #expect(try DNSMessage.parse(plain) == message)
    }

    @Test func trailingBytesAreRejected() {
        #expect(
            thrown { try DNSMessage.parse(Captured.a.response + [0]) }
                == .trailingBytes(offset: Captured.a.response.count))
        #expect(
            thrown { try DNSQuery.parse(Captured.a.query + [0, 0]) } == .trailingBytes(offset: Captured.a.query.count))
    }

    @Test func questionCountsAreTheCallersChoice() throws {
        let two = header(qd: 2) + question(wire("a.example")) + question(wire("b.example"), type: 28)
        let message = try DNSMessage.parse(two)
        #expect(message.questions.map(\.type) == [.a, .aaaa])
        let none = try DNSMessage.parse(header(qd: 0))
        #expect(none.questions.isEmpty)
    }
}
