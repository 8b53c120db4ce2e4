import DNSProxy
import DNSWire
import DomainMatch
import ProxyCore
import Testing

@testable import HTTPProxy

@Suite struct NameLookupTests {
    private func reply(
        _ rcode: DNSRcode = .noError, answers: [ResourceRecord] = [], ede: ExtendedDNSError? = nil
    ) -> [UInt8] {
        var header = DNSHeader(id: 1)
        header.isResponse = true
        header.rcode = rcode
        var edns = EDNS(udpPayloadSize: 1232)
        if let ede { edns.addExtendedError(ede) }
        var writer = DNSMessageWriter(header: header, edns: edns)
        writer.addQuestion(DNSQuestion(name: try! DNSName("example.org"), type: .a))
        for record in answers { writer.addRecord(record, to: .answer) }
        return writer.finish()
    }

    @Test func theQueryIsARecursiveQueryWithEDNS() throws {
        let query = try #require(NameLookup.query(try QueryName.parse("example.org"), type: .aaaa))
        let parsed = try DNSQuery.parse(query)
        #expect(parsed.question.type == .aaaa)
        #expect(parsed.question.name.description == "example.org")
        #expect(parsed.header.recursionDesired)
        #expect(parsed.edns != nil, "so a block answer carries its reason")
    }

    @Test func addressesFromTheEndOfACNAMEChain() {
        let answers = [
            ResourceRecord(name: try! DNSName("example.org"), ttl: 60, rdata: .cname(try! DNSName("edge.example"))),
            ResourceRecord(name: try! DNSName("edge.example"), ttl: 60, rdata: .a(.init(192, 0, 2, 7))),
            ResourceRecord(name: try! DNSName("edge.example"), ttl: 60, rdata: .aaaa(.init(high: 1, low: 2))),
        ]
        #expect(
            NameLookup.interpret(reply(answers: answers))
                == .addresses([IPAddress("192.0.2.7")!, .v6(high: 1, low: 2)]))
    }

    @Test func aBlockIsRecognisedByItsExtendedError() {
        let blocked = reply(.nxDomain, ede: ExtendedDNSError(code: .blocked, text: "category:adult"))
        #expect(NameLookup.interpret(blocked) == .blocked(BlockReason(text: "category:adult")))
        let null = reply(
            answers: [ResourceRecord(name: try! DNSName("example.org"), ttl: 10, rdata: .a(.init(0)))],
            ede: ExtendedDNSError(code: .blocked, text: "downtime"))
        #expect(NameLookup.interpret(null) == .blocked(BlockReason(text: "downtime")), "block_mode null too")
    }

    @Test func failures() {
        #expect(NameLookup.interpret(reply(.nxDomain)) == .notFound)
        #expect(NameLookup.interpret(reply()) == .noAddress)
        #expect(NameLookup.interpret(reply(.servFail)) == .failed)
        #expect(NameLookup.interpret([1, 2, 3]) == .failed)
    }
}
