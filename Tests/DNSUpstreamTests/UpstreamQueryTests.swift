import DNSWire
import TestSupport
import Testing

@testable import DNSUpstream

/// The query sent upstream and the checks a reply must pass before it is used.
@Suite(.blocking) struct UpstreamQueryTests {
    let question = DNSQuestion(name: try! DNSName("www.Example.test"), type: .a)

    private func reply(
        to query: UpstreamQuery, id: UInt16, rcode: DNSRcode = .noError, truncated: Bool = false,
        isResponse: Bool = true, name: String? = nil, type: DNSType? = nil
    ) throws -> [UInt8] {
        var header = DNSHeader(id: id)
        header.isResponse = isResponse
        header.rcode = rcode
        header.isTruncated = truncated
        var writer = DNSMessageWriter(header: header)
        var asked = query.question
        if let name { asked.name = try DNSName(name) }
        if let type { asked.type = type }
        writer.addQuestion(asked)
        return writer.finish()
    }

    @Test func queryHasRandomIDRecursionDesiredAuthenticDataCopiedCDAndEDNSWithCopiedDO() throws {
        for (dnssecOK, checkingDisabled) in [(false, false), (true, true), (true, false)] {
            let query = UpstreamQuery(question: question, dnssecOK: dnssecOK, checkingDisabled: checkingDisabled)
            let message = try DNSMessage.parse(query.message(id: 0xBEEF))
            #expect(message.header.id == 0xBEEF)
            #expect(message.header.recursionDesired)
            // RFC 6840 §5.7: asks a validating upstream for its AD, with or without DO.
            #expect(message.header.authenticData)
            #expect(!message.header.isResponse)
            #expect(message.header.checkingDisabled == checkingDisabled)
            #expect(message.questions == [question])
            let edns = try #require(message.edns)
            #expect(edns.udpPayloadSize == 1232)
            #expect(edns.dnssecOK == dnssecOK)
        }
    }

    @Test func idsComeFromTheSystemGeneratorAndVary() {
        let ids = Set((0..<1000).map { _ in UpstreamQuery.randomID() })
        #expect(ids.count > 950)  // 1000 draws from 65536: a handful of collisions at most
    }

    @Test func theMatchingReplyIsTheAnswerWhateverTheNameCase() throws {
        let query = UpstreamQuery(question: question, dnssecOK: false, checkingDisabled: false)
        #expect(query.verdict(on: try reply(to: query, id: 7), id: 7) == .answer)
        #expect(query.verdict(on: try reply(to: query, id: 7, name: "WWW.EXAMPLE.TEST"), id: 7) == .answer)
        #expect(query.verdict(on: try reply(to: query, id: 7, rcode: .nxDomain), id: 7) == .answer)
    }

    @Test func mismatchingRepliesAreDropped() throws {
        let query = UpstreamQuery(question: question, dnssecOK: false, checkingDisabled: false)
        #expect(query.verdict(on: try reply(to: query, id: 8), id: 7) == .mismatch(.wrongID))
        #expect(query.verdict(on: try reply(to: query, id: 7, name: "evil.test"), id: 7) == .mismatch(.wrongQuestion))
        #expect(query.verdict(on: try reply(to: query, id: 7, type: .aaaa), id: 7) == .mismatch(.wrongQuestion))
        #expect(query.verdict(on: try reply(to: query, id: 7, isResponse: false), id: 7) == .mismatch(.notAResponse))
        #expect(query.verdict(on: [0, 7, 0x80, 0], id: 7) == .mismatch(.tooShort))
        // A header with no question at all cannot prove it answers ours.
        var header = DNSHeader(id: 7)
        header.isResponse = true
        #expect(query.verdict(on: DNSMessageWriter(header: header).finish(), id: 7) == .mismatch(.wrongQuestion))
    }

    @Test func truncationAndTheFailoverRcodesAreNamed() throws {
        let query = UpstreamQuery(question: question, dnssecOK: false, checkingDisabled: false)
        #expect(query.verdict(on: try reply(to: query, id: 1, truncated: true), id: 1) == .truncated)
        #expect(query.verdict(on: try reply(to: query, id: 1, rcode: .servFail), id: 1) == .failover(.servFail))
        #expect(query.verdict(on: try reply(to: query, id: 1, rcode: .refused), id: 1) == .failover(.refused))
    }
}
