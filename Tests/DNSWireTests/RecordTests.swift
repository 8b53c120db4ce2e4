import DNSWire
import Testing

@Suite("Resource records and RDATA")
struct RecordTests {
    static let owner = name("host.example.test")

    static let samples: [RData] = [
        .a(.init(192, 0, 2, 1)),
        .aaaa(.init(high: 0x2001_0db8_0000_0000, low: 1)),
        .ns(name("ns1.example.test")),
        .cname(name("web.example.test")),
        .ptr(name("host.example.test")),
        .dname(name("example.net")),
        .mx(.init(preference: 10, exchange: name("mail.example.test"))),
        .soa(
            .init(
                mname: name("ns1.example.test"), rname: name("hostmaster.example.test"), serial: 2_024_010_101,
                refresh: 7200, retry: 3600, expire: 1_209_600, minimum: 300)),
        .srv(.init(priority: 10, weight: 60, port: 5060, target: name("sip.example.test"))),
        .txt(hex("0b 763d73706631202d616c6c 00")),
        .svcb(try! .init(priority: 16, target: name("svc.example.net"), params: [(.port, u16(8443))])),
        .https(try! .init(priority: 1, target: .root, params: [(.alpn, [2, 0x68, 0x32])])),
        .https(try! .init(priority: 0, target: name("alias.example.net"), params: [])),
        .unknown(type: .caa, bytes: hex("0005 697373756531")),
        .unknown(type: DNSType(65280), bytes: []),
    ]

    @Test(arguments: samples)
    func roundTripsThroughAMessage(rdata: RData) throws {
        let record = ResourceRecord(name: Self.owner, ttl: 3600, rdata: rdata)
        let message = DNSMessage(
            header: DNSHeader(id: 1, flags: 0x8400), questions: [DNSQuestion(name: Self.owner, type: rdata.type)],
            answers: [record, record])
        let bytes = message.serialized()
        let parsed = try DNSMessage.parse(bytes)
        #expect(parsed.answers == [record, record])
        #expect(parsed.answers[0].type == rdata.type)
        // Uncompressed as well: the same records come back.
        #expect(try DNSMessage.parse(message.serialized(compress: false)).answers == [record, record])
    }

    @Test func recordsRoundTripThroughReaderAndWriterDirectly() throws {
        var writer = DNSWriter()
        for rdata in Self.samples {
            writer.writeRecord(ResourceRecord(name: Self.owner, ttl: 5, rdata: rdata), compress: false)
        }
        var reader = DNSReader(writer.bytes)
        for rdata in Self.samples { #expect(try reader.readRecord().rdata == rdata) }
        #expect(reader.readableBytes == 0)
    }

    @Test func compressionOnlyWhereRFC3597Allows() {
        func rdataBytes(_ rdata: RData) -> [UInt8] {
            var writer = DNSWriter()
            writer.writeHeader(DNSHeader())
            writer.writeName(name("example.test"))  // at 12: a compression target for everything below
            let start = writer.writerIndex
            writer.writeRData(rdata)
            return Array(writer.bytes[(start + 2)...])
        }
        #expect(rdataBytes(.cname(name("www.example.test"))) == [3, 0x77, 0x77, 0x77, 0xC0, 12])
        #expect(rdataBytes(.ns(name("example.test"))) == [0xC0, 12])
        #expect(rdataBytes(.mx(.init(preference: 1, exchange: name("example.test")))) == [0, 1, 0xC0, 12])
        #expect(rdataBytes(.dname(name("example.test"))) == wire("example.test"))
        #expect(
            rdataBytes(.srv(.init(priority: 0, weight: 0, port: 1, target: name("example.test")))) == [
                0, 0, 0, 0, 0, 1,
            ] + wire("example.test"))
        let svcb = try! RData.SVCB(priority: 1, target: name("example.test"), params: [])
        #expect(rdataBytes(.https(svcb)) == [0, 1] + wire("example.test"))
    }

    @Test func typedAccessors() {
        #expect(RData.a(.init(10, 0, 0, 1)).ipv4?.description == "10.0.0.1")
        #expect(RData.a(.init(10, 0, 0, 1)).ipv4?.octet(3) == 1)
        #expect(RData.aaaa(.init(high: 0, low: 1)).ipv6?.description == "::1")
        #expect(RData.cname(name("x.example")).cnameTarget == name("x.example"))
        #expect(RData.dname(name("x.example")).dnameTarget == name("x.example"))
        #expect(RData.ns(name("x.example")).cnameTarget == nil)
        #expect(Self.samples[7].soa?.minimum == 300)
        #expect(Self.samples[7].soa?.rname == name("hostmaster.example.test"))
        #expect(RData.a(.init(1, 2, 3, 4)).soa == nil && RData.a(.init(1, 2, 3, 4)).ipv6 == nil)
        #expect(Self.samples[10].svcb?.priority == 16 && Self.samples[11].svcb?.priority == 1)
        let txt = RData.txt(strings: ["v=spf1 -all", String(repeating: "x", count: 300)])
        #expect(txt.txtStrings?.map(\.count) == [11, 255, 45])
        #expect(RData.a(.init(1, 2, 3, 4)).txtStrings == nil)
    }

    @Test(arguments: [
        (RData.IPv6(high: 0x2001_0db8_0000_0000, low: 1), "2001:db8::1"),
        (RData.IPv6(high: 0, low: 0), "::"),
        (RData.IPv6(high: 0x0001_0000_0000_0000, low: 0), "1::"),
        (RData.IPv6(high: 0x2001_0db8_0000_0001, low: 0x0001_0001_0001_0001), "2001:db8:0:1:1:1:1:1"),
        (RData.IPv6(high: 0x2001_0000_0000_0001, low: 0x0000_0000_0000_0001), "2001:0:0:1::1"),
        // A tie between two runs: the first one wins (RFC 5952 §4.2.3).
        (RData.IPv6(high: 0x0001_0000_0000_0001, low: 0x0000_0000_0001_0001), "1::1:0:0:1:1"),
        (RData.IPv6(high: 0xfe80_0000_0000_0000, low: 0x0211_22ff_fe33_4455), "fe80::211:22ff:fe33:4455"),
    ])
    func ipv6TextFollowsRFC5952(address: RData.IPv6, text: String) {
        #expect(address.description == text)
    }

    @Test func descriptionsForLogs() throws {
        let parsed = try DNSMessage.parse(Captured.mx.response)
        #expect(
            parsed.answers.map(\.description) == [
                "example.test 3600 IN MX 10 mail.example.test", "example.test 3600 IN MX 20 mail2.example.test",
            ])
        #expect(RData.unknown(type: .caa, bytes: [0, 0xAB]).description == ##"\# 2 00ab"##)
        #expect(parsed.questions[0].description == "example.test IN MX")
    }

    @Test func otherClassesAndUpdateRecordsStayRaw() throws {
        let chaosA = header(an: 1) + question(wire("a")) + rr(wire("a"), type: 1, dnsClass: 3, rdata: [1, 0xC0, 12])
        #expect(try DNSMessage.parse(chaosA).answers[0].rdata == .unknown(type: .a, bytes: [1, 0xC0, 12]))
        let delete = header(an: 1) + question(wire("a")) + rr(wire("a"), type: 5, dnsClass: 255, ttl: 0, rdata: [])
        #expect(try DNSMessage.parse(delete).answers[0].rdata == .unknown(type: .cname, bytes: []))
    }

    @Test func rdataThatDoesNotFitItsTypeIsRdataLength() {
        let prefix = header(an: 1) + question(wire("a"))
        let rdataStart = prefix.count + 3 + 10
        func error(_ type: UInt16, _ rdata: [UInt8]) -> DNSWireError? {
            thrown { try DNSMessage.parse(prefix + rr(wire("a"), type: type, rdata: rdata)) }
        }
        #expect(error(1, [1, 2, 3, 4, 5]) == .rdataLength(type: .a, offset: rdataStart))
        #expect(error(1, [1, 2, 3]) == .rdataLength(type: .a, offset: rdataStart))
        #expect(error(28, [UInt8](repeating: 0, count: 4)) == .rdataLength(type: .aaaa, offset: rdataStart))
        #expect(error(5, []) == .rdataLength(type: .cname, offset: rdataStart))
        #expect(error(5, [5, 0x61, 0x62]) == .rdataLength(type: .cname, offset: rdataStart))  // name overruns RDLENGTH
        // A byte left over after the MX exchange name.
        #expect(error(15, [0, 1] + wire("mx") + [0]) == .rdataLength(type: .mx, offset: rdataStart))
        #expect(error(6, wire("a") + wire("b") + [0, 0, 0, 1]) == .rdataLength(type: .soa, offset: rdataStart))
        #expect(error(33, [0, 1, 0, 2]) == .rdataLength(type: .srv, offset: rdataStart))
        // A name inside RDATA still obeys every pointer rule.
        #expect(error(5, [0xC0, 0x0C]) == nil)
        #expect(error(5, [0xC0, 0x30]) == .pointerOutOfBounds(offset: rdataStart))
    }

    @Test func rdlengthPastTheEndIsTruncated() {
        var packet = header(an: 1) + question(wire("a")) + rr(wire("a"), type: 1, rdata: [1, 2, 3, 4])
        let rdataStart = packet.count - 4
        packet.removeLast(2)
        #expect(thrown { try DNSMessage.parse(packet) } == .truncated(section: .answer, offset: rdataStart))
        let cursorError = thrown {
            var cursor = try DNSRecordCursor(packet)
            return try cursor.next(in: packet)
        }
        #expect(cursorError == .truncated(section: .answer, offset: rdataStart))
    }
}
