import DNSWire
import Testing

@Suite("SVCB / HTTPS (RFC 9460) and ECH removal")
struct SVCBTests {
    /// HTTPS 1 . alpn=h2,h3 ipv4hint=192.0.2.1 ech=<8 bytes>, built by hand.
    static let https = hex("0001 00  0001 0006 026832 026833  0004 0004 c0000201  0005 0008 0102030405060708")

    @Test func parsesAHandBuiltHTTPSRecord() throws {
        let svcb = try RData.SVCB(rdata: Self.https)
        #expect(svcb.priority == 1 && svcb.target.isRoot && !svcb.isAliasMode)
        #expect(svcb.params.map(\.key) == [.alpn, .ipv4hint, .ech])
        #expect(svcb.value(for: .ipv4hint).map(Array.init) == [192, 0, 2, 1])
        #expect(svcb.value(for: .port) == nil)
        #expect(svcb.rdata == Self.https)
        #expect(svcb.description == "1 . alpn=h2,h3 ipv4hint=192.0.2.1 ech=<8 bytes>")
    }

    @Test func removesECHKeepingTheOtherParamsInOrder() throws {
        let stripped = try #require(try RData.SVCB.removingECH(fromRData: Self.https))
        #expect(stripped == hex("0001 00  0001 0006 026832 026833  0004 0004 c0000201"))
        #expect(stripped.count == Self.https.count - 12)
        #expect(try RData.SVCB.removingECH(fromRData: stripped) == nil)

        // ech between other keys.
        let middle = try RData.SVCB(
            priority: 2, target: name("pool.example"),
            params: [
                (.ipv6hint, hex("20010db8000000000000000000000001")), (.ech, [9, 9]), (.alpn, [2, 0x68, 0x32]),
            ])
        let result = try RData.SVCB(rdata: try #require(try RData.SVCB.removingECH(fromRData: middle.rdata)))
        #expect(result.params.map(\.key) == [.alpn, .ipv6hint])
        #expect(result.target == name("pool.example") && result.priority == 2)
    }

    @Test func echListedAsMandatoryLeavesTheMandatoryList() throws {
        var both = try RData.SVCB(
            priority: 1, target: .root,
            params: [
                (.mandatory, u16(1) + u16(5)), (.alpn, [2, 0x68, 0x33]), (.ech, [1]),
            ])
        let removedFromBoth = both.removeParam(.ech)
        #expect(removedFromBoth)
        #expect(both.value(for: .mandatory).map(Array.init) == u16(1))
        #expect(try RData.SVCB(rdata: both.rdata) == both)  // still valid

        var only = try RData.SVCB(priority: 1, target: .root, params: [(.mandatory, u16(5)), (.ech, [1])])
        let removed = only.removeParam(.ech)
        let removedAgain = only.removeParam(.ech)
        #expect(removed && !removedAgain)
        #expect(only.paramBytes.isEmpty)
    }

    @Test func removesECHAcrossAMessage() throws {
        var message = try DNSMessage.parse(Captured.https.response)
        #expect(message.answers[0].rdata.svcb?.value(for: .ech)?.count == 75)
        #expect(message.answers[0].rdata.description.hasSuffix("ech=<75 bytes>"))
        let changed = message.removeECH()
        let changedAgain = message.removeECH()
        #expect(changed && !changedAgain)
        #expect(message.answers[0].rdata.svcb?.params.map(\.key) == [.alpn, .ipv4hint])
    }

    @Test func removesECHFromSerializedAnswers() throws {
        let original = Captured.https.response
        let stripped = try #require(try DNSPacket.removingECH(from: original))
        var cursor = try DNSRecordCursor(stripped)
        let answer = try #require(try cursor.next(in: stripped))
        #expect(answer.type == .https)
        #expect(answer.rdataRange.count == 100 - 4 - 75)
        let parsed = try DNSMessage.parse(stripped)
        let before = try DNSMessage.parse(original)
        #expect(parsed.answers[0].rdata.svcb?.description == "1 . alpn=h2,h3 ipv4hint=192.0.2.1")
        #expect(parsed.authorities == before.authorities && parsed.additionals == before.additionals)
        #expect(parsed.edns == before.edns && parsed.header == before.header)

        #expect(try DNSPacket.removingECH(from: Captured.svcb.response) == nil)
        #expect(try DNSPacket.removingECH(from: Captured.a.response) == nil)
    }

    /// RFC 9460 Appendix D wire-format vectors.
    @Test(arguments: [
        // D.1 AliasMode: 0 foo.example.com.
        "0000 03666f6f076578616d706c6503636f6d00",
        // D.2 ServiceMode: 1 .
        "0001 00",
        // 16 foo.example.com. port=53
        "0010 03666f6f076578616d706c6503636f6d00 0003 0002 0035",
        // 1 foo.example.com. key667=hello
        "0001 03666f6f076578616d706c6503636f6d00 029b 0005 68656c6c6f",
        // 1 foo.example.com. ipv6hint=2001:db8::1,2001:db8::53:1
        "0001 03666f6f076578616d706c6503636f6d00 0006 0020 20010db8000000000000000000000001 20010db8000000000000000000530001",
        // 16 foo.example.org. alpn=h2,h3-19 mandatory=ipv4hint,alpn ipv4hint=192.0.2.1
        "0010 03666f6f076578616d706c65036f726700 0000 0004 00010004 0001 0009 026832 0568332d3139 0004 0004 c0000201",
    ])
    func rfc9460Vectors(text: String) throws {
        let rdata = hex(text)
        let svcb = try RData.SVCB(rdata: rdata)
        #expect(svcb.rdata == rdata)
    }

    @Test func rfc9460VectorsRenderForLogs() throws {
        let alias = try RData.SVCB(rdata: hex("0000 03666f6f076578616d706c6503636f6d00"))
        #expect(alias.isAliasMode && alias.description == "0 foo.example.com.")
        let v08 = try RData.SVCB(
            rdata: hex(
                "0010 03666f6f076578616d706c65036f726700 0000 0004 00010004 0001 0009 026832 0568332d3139 0004 0004 c0000201"
            ))
        #expect(v08.description == "16 foo.example.org. mandatory=alpn,ipv4hint alpn=h2,h3-19 ipv4hint=192.0.2.1")
    }

    @Test(arguments: [
        // Keys out of order, and repeated (RFC 9460 §2.2: strictly increasing).
        ("0001 00 0003 0002 0035 0001 0003 026832", SVCBProblem.keyOrder(key: 1, offset: 9)),
        ("0001 00 0003 0002 0035 0003 0002 0036", .keyOrder(key: 3, offset: 9)),
        // A value longer than what is left, and a key cut short.
        ("0001 00 0003 0009 0035", .valuePastEnd(key: 3, offset: 3)),
        ("0001 00 0003 0002 0035 0004", .truncatedKey(offset: 9)),
        // Values of the wrong shape for keys RFC 9460 §7 defines.
        ("0001 00 0003 0003 003500", .badValue(key: 3, offset: 3)),
        ("0001 00 0002 0003 616263", .badValue(key: 2, offset: 3)),
        ("0001 00 0001 0000", .badValue(key: 1, offset: 3)),
        ("0001 00 0001 0003 00 6832", .badValue(key: 1, offset: 3)),
        ("0001 00 0001 0003 03 6832", .badValue(key: 1, offset: 3)),
        ("0001 00 0004 0005 c000020101", .badValue(key: 4, offset: 3)),
        ("0001 00 0006 0008 20010db800000000", .badValue(key: 6, offset: 3)),
        // mandatory: empty, naming itself, repeating a key, naming a key that is absent.
        ("0001 00 0000 0000", .badValue(key: 0, offset: 3)),
        ("0001 00 0000 0002 0000", .badValue(key: 0, offset: 3)),
        ("0001 00 0000 0004 007b007b 007b 0003 616263", .badValue(key: 0, offset: 3)),
        ("0001 00 0000 0002 007b", .mandatoryKeyMissing(key: 123)),
    ])
    func badSvcParamsAreNamed(text: String, problem: SVCBProblem) {
        #expect(thrown { try RData.SVCB(rdata: hex(text)) } == .badSvcParams(reason: problem))
    }

    @Test func targetNameMustNotBeCompressed() {
        // Inside a message the pointer would be valid, but RFC 9460 §2.2 forbids it.
        let packet =
            header(an: 1) + question(wire("a.example"), type: 65) + rr([0xC0, 12], type: 65, rdata: [0, 1, 0xC0, 12])
        let rdataStart = packet.count - 4
        #expect(thrown { try DNSMessage.parse(packet) } == .compressedName(offset: rdataStart + 2))
        #expect(
            thrown { try RData.SVCB(priority: 1, target: .root, params: [(.alpn, [])]) }
                == .badSvcParams(reason: .badValue(key: 1, offset: 0)))
    }

    @Test func errorsInsideAMessageUseMessageOffsets() {
        let rdata = hex("0001 00 0003 0002 0035 0001 0003 026832")
        let packet = header(an: 1) + question(wire("a"), type: 64) + rr(wire("a"), type: 64, rdata: rdata)
        let rdataStart = packet.count - rdata.count
        #expect(
            thrown { try DNSMessage.parse(packet) } == .badSvcParams(reason: .keyOrder(key: 1, offset: rdataStart + 9)))
    }
}
