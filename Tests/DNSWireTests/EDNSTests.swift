import DNSWire
import Testing

@Suite("EDNS0 (RFC 6891) and Extended DNS Errors (RFC 8914)")
struct EDNSTests {
    @Test func readsDigsOPTWithACookie() throws {
        let query = try DNSQuery.parse(Captured.a.query)
        let edns = try #require(query.edns)
        #expect(edns.udpPayloadSize == 1232 && edns.version == 0 && !edns.dnssecOK && edns.rcodeHigh == 0)
        #expect(edns.options.count == 1)
        #expect(edns.option(.cookie)?.data == hex("4e5dfb7625126c31"))
        #expect(edns.wireLength == 11 + 12)
        let message = try DNSMessage.parse(Captured.a.query)
        #expect(message.edns == edns && message.additionals.isEmpty)
    }

    @Test func doBitVersionAndExtendedRcodeRoundTrip() throws {
        var edns = EDNS(udpPayloadSize: 4096, dnssecOK: true, version: 1)
        edns.options = [EDNSOption(code: .padding, data: [0, 0, 0])]
        var message = DNSMessage(
            header: DNSHeader(id: 9), questions: [DNSQuestion(name: name("a.example"), type: .a)], edns: edns)
        message.rcode = .badVers  // 16: the upper bits live in OPT
        #expect(message.header.rcode == .noError && message.edns?.rcodeHigh == 1)
        let bytes = message.serialized()
        // OPT is last: root, type 41, class 4096, TTL = rcodeHigh 1, version 1, DO.
        #expect(Array(bytes.suffix(11 + 7)) == hex("00 0029 1000 01018000 0007 000c 0003 000000"))
        let parsed = try DNSMessage.parse(bytes)
        #expect(parsed.rcode == .badVers && parsed.edns?.dnssecOK == true && parsed.edns?.version == 1)
        #expect(parsed.edns?.options == edns.options)

        var plain = DNSMessage(header: DNSHeader())
        plain.rcode = .badCookie  // no EDNS yet: one is added to hold the upper bits
        #expect(plain.edns?.rcodeHigh == 1 && plain.rcode == .badCookie)
        plain.rcode = .refused
        #expect(plain.edns?.rcodeHigh == 0 && plain.rcode == .refused)
    }

    @Test func optPlacementErrors() {
        let base = header(ar: 2) + question(wire("a"))
        let second = base + optRR() + optRR()
        #expect(thrown { try DNSMessage.parse(second) } == .multipleOPT(offset: base.count + 11))
        #expect(thrown { try DNSQuery.parse(second) } == .multipleOPT(offset: base.count + 11))

        let notRoot = header(ar: 1) + question(wire("a")) + optRR(owner: wire("a"))
        #expect(thrown { try DNSMessage.parse(notRoot) } == .optNotRoot(offset: 19))
        #expect(thrown { try DNSQuery.parse(notRoot) } == .optNotRoot(offset: 19))
        let pointerOwner = header(ar: 1) + question(wire("a")) + optRR(owner: [0xC0, 12])
        #expect(thrown { try DNSQuery.parse(pointerOwner) } == .optNotRoot(offset: 19))

        let inAnswer = header(an: 1) + question(wire("a")) + optRR()
        #expect(thrown { try DNSMessage.parse(inAnswer) } == .optOutsideAdditional(section: .answer))
        #expect(thrown { try DNSQuery.parse(inAnswer) } == .optOutsideAdditional(section: .answer))
    }

    @Test func optionsMustFitTheOPTRdata() throws {
        let base = header(ar: 1) + question(wire("a"))
        let optionStart = base.count + 11
        let overrun = base + optRR(options: u16(10) + u16(9) + [1, 2, 3, 4])
        #expect(thrown { try DNSMessage.parse(overrun) } == .badEDNSOption(offset: optionStart))
        #expect(thrown { try DNSQuery.parse(overrun) } == .badEDNSOption(offset: optionStart))
        let stub = base + optRR(options: [0, 10, 0])
        #expect(thrown { try DNSMessage.parse(stub) } == .badEDNSOption(offset: optionStart))
        let empty = base + optRR(options: u16(12) + u16(0))
        #expect(try DNSQuery.parse(empty).edns?.options == [EDNSOption(code: .padding, data: [])])
    }

    @Test func buildsExtendedDNSErrorBlocked() throws {
        let error = ExtendedDNSError(code: .blocked, text: "Blocked: adult content")
        #expect(error.option.code.rawValue == 15)
        #expect(error.option.data == [0, 15] + Array("Blocked: adult content".utf8))
        #expect(error.description == "EDE 15 (Blocked): Blocked: adult content")

        var edns = EDNS()
        edns.addExtendedError(error)
        edns.addExtendedError(ExtendedDNSError(code: .staleAnswer))
        let message = DNSMessage(header: DNSHeader(flags: 0x8180), edns: edns)
        let parsed = try DNSMessage.parse(message.serialized())
        #expect(try parsed.edns?.extendedErrors() == [error, ExtendedDNSError(code: .staleAnswer)])
    }

    @Test func parsesExtendedDNSErrorsLeniently() throws {
        #expect(try ExtendedDNSError(optionData: [0, 22]) == ExtendedDNSError(code: .noReachableAuthority))
        let withNul = try ExtendedDNSError(optionData: [0, 14] + Array("starting".utf8) + [0])
        #expect(withNul == ExtendedDNSError(code: .notReady, text: "starting"))
        // Found by the edns fuzz target: one NUL dropped of two left text that lost the
        // other when written back, so the error did not survive a round trip.
        let twoNuls = try ExtendedDNSError(optionData: [0, 22] + Array("up".utf8) + [0, 0])
        #expect(twoNuls.text == "up")
        #expect(try ExtendedDNSError(optionData: twoNuls.option.data) == twoNuls)
        let badUTF8 = try ExtendedDNSError(optionData: [0, 3, 0x61, 0xFF, 0x62])
        #expect(badUTF8.text == "a\u{FFFD}b")
        #expect(thrown { try ExtendedDNSError(optionData: [15]) } == .badExtendedError(length: 1))
        #expect(
            thrown { try EDNS(options: [EDNSOption(code: .extendedError, data: [])]).extendedErrors() }
                == .badExtendedError(length: 0))
        #expect(EDECode.noReachableAuthority.description == "No Reachable Authority")
        #expect(EDECode(999).description == "EDE999")
        #expect(ExtendedDNSError(code: .notReady).description == "EDE 14 (Not Ready)")
    }

    /// RFC 3225 §3: DO copied; RFC 6891 §6.1.4: the other flag bits are not echoed.
    @Test func anAnswersOPTCopiesDOAndNothingElseOfTheQuerys() {
        for dnssecOK in [false, true] {
            var asked = EDNS(udpPayloadSize: 4096, dnssecOK: dnssecOK, options: [EDNSOption(code: .cookie, data: [1])])
            asked.flags |= 0x4001
            let answer = EDNS.answering(asked, udpPayloadSize: 1232, options: [ExtendedDNSError(code: .blocked).option])
            #expect(answer.dnssecOK == dnssecOK && answer.flags == (dnssecOK ? 0x8000 : 0))
            #expect(answer.udpPayloadSize == 1232 && answer.version == 0 && answer.rcodeHigh == 0)
            #expect(answer.options.map(\.code) == [.extendedError])
        }
    }

    @Test func dnssecsOwnTypesAreNamed() {
        let own: [DNSType] = [.ds, .rrsig, .nsec, .dnskey, .nsec3, .nsec3param, .cds, .cdnskey]
        #expect(own.map(\.description) == ["DS", "RRSIG", "NSEC", "DNSKEY", "NSEC3", "NSEC3PARAM", "CDS", "CDNSKEY"])
        #expect(own.allSatisfy { $0.isDNSSEC })
        let others: [DNSType] = [.a, .aaaa, .cname, .https, .svcb, .soa, .ns, .txt, .any, .opt, DNSType(32769)]
        #expect(!others.contains { $0.isDNSSEC })
    }
}
