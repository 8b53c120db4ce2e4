import DNSUpstream
import DNSWire
import DomainMatch
import Policy
import TestSupport
import Testing

@testable import DNSProxy

/// docs/dns.md#dnssec: DNSSEC's own types undecided, the header flags and the OPT of every
/// answer as a validating client reads them.
@Suite(.blocking) struct DNSSECTests {
    typealias F = PipelineFixture

    /// A query with the DO and AD bits a validating client or stub sets; `ednsFlags` are
    /// the OPT's flag bits (DO is 0x8000) when given.
    static func query(
        _ name: String, _ type: DNSType = .a, dnssecOK: Bool = false, authenticData: Bool = false,
        ednsFlags: UInt16? = nil, edns: Bool = true
    ) -> [UInt8] {
        var header = DNSHeader(id: 0x4321)
        header.recursionDesired = true
        header.authenticData = authenticData
        var opt = EDNS(udpPayloadSize: 1232, dnssecOK: dnssecOK)
        if let ednsFlags { opt.flags = ednsFlags }
        var writer = DNSMessageWriter(header: header, edns: edns ? opt : nil)
        writer.addQuestion(DNSQuestion(name: try! DNSName(name), type: type))
        return writer.finish()
    }

    /// An upstream's reply to `pending`: `flags` over QR (an authoritative server's AA,
    /// a validating resolver's AD).
    static func reply(
        to pending: PendingQuery, answers: [ResourceRecord], authoritative: Bool = false,
        recursionAvailable: Bool = true, authenticData: Bool = false, zBit: Bool = false
    ) -> [UInt8] {
        var header = DNSHeader(id: 7)
        header.isResponse = true
        header.isAuthoritative = authoritative
        header.recursionAvailable = recursionAvailable
        header.authenticData = authenticData
        if zBit { header.flags |= 0x0040 }
        var writer = DNSMessageWriter(header: header, edns: EDNS(udpPayloadSize: 1232, dnssecOK: true))
        writer.addQuestion(pending.upstreamQuestion)
        for record in answers { writer.addRecord(record, to: .answer) }
        return writer.finish()
    }

    static func record(_ name: String, _ type: DNSType, _ bytes: [UInt8]) -> ResourceRecord {
        ResourceRecord(name: try! DNSName(name), ttl: 300, rdata: .unknown(type: type, bytes: bytes))
    }

    /// A DS RDATA: key tag, algorithm 13, digest type 2, a 32-byte digest.
    static let dsData: [UInt8] = [0x8F, 0x21, 13, 2] + Array(repeating: 0xAB, count: 32)

    static let dnssecTypes: [DNSType] = [.ds, .dnskey, .rrsig, .nsec, .nsec3, .nsec3param, .cds, .cdnskey]

    @Test func dnssecTypesAreForwardedUndecidedForBlockedAndRewrittenNames() throws {
        let fixture = F(policy: F.strict)
        for name in ["blocked.example", "adult.example", "google.com", "www.google.com", "youtube.com"] {
            // The same names of another type are decided: the policy is in force.
            #expect(fixture.receive(Self.query(name, .txt)).pending == nil, "\(name) TXT is blocked or rewritten")
            for type in Self.dnssecTypes {
                let pending = try #require(fixture.receive(Self.query(name, type, dnssecOK: true)).pending)
                #expect(pending.upstreamQuestion.name == (try DNSName(name)), "\(name) \(type)")
                #expect(pending.upstreamQuestion.type == type)
                guard case .forward(let inspect) = pending.purpose else {
                    Issue.record("\(name) \(type) is not forwarded: \(pending.purpose)")
                    continue
                }
                #expect(!inspect, "\(name) \(type): its answer is not inspected")
            }
        }
        #expect(fixture.hits.all.count == 2, "only the two TXT blocks are hits: \(fixture.hits.all.map(\.name))")
    }

    @Test func aDSAnswerPassesAsTheUpstreamGaveIt() throws {
        let fixture = F(policy: F.strict)
        let pending = try #require(fixture.receive(Self.query("google.com", .ds, dnssecOK: true)).pending)
        let ds = Self.record("google.com", .ds, Self.dsData)
        let signature = Self.record("google.com", .rrsig, [0, 43, 13, 2] + Array(repeating: 7, count: 40))
        let answer = try #require(
            fixture.pipeline.complete(
                pending, reply: Self.reply(to: pending, answers: [ds, signature], authenticData: true), now: F.noon
            ).replyMessage)
        #expect(answer.rcode == .noError)
        #expect(answer.answers.map(\.rdata) == [ds.rdata, signature.rdata])
        #expect(answer.header.authenticData, "unchanged, so the upstream's AD stays for a DO client")
        #expect(answer.edns?.dnssecOK == true)
    }

    @Test func theCanaryIsNoBlockForDNSSECTypes() throws {
        let fixture = F(policy: F.strict)
        let reply = try #require(fixture.receive(Self.query("blocked.phosra-gate.test", .ds)).replyMessage)
        #expect(reply.rcode == .nxDomain)
        #expect(reply.extendedErrorTexts.isEmpty)
    }

    /// An authoritative upstream's AA=1, RA=0 (and a stray Z bit) never reach the client:
    /// the answer comes from this server's cache (RFC 1035 §4.1.1).
    @Test func cachedAnswersAreARecursiveServersNotAuthoritative() throws {
        let path = try DatagramPath()
        let fixture = path.fixture
        let pending = try #require(fixture.receive(Self.query("example.org")).pending)
        let first = try #require(
            fixture.pipeline.complete(
                pending,
                reply: Self.reply(
                    to: pending, answers: [F.a("example.org", 0x0102_0304)], authoritative: true,
                    recursionAvailable: false, zBit: true),
                now: F.noon
            ).replyMessage)
        #expect(!first.header.isAuthoritative && first.header.recursionAvailable && first.header.flags & 0x40 == 0)
        // From the cache, written straight into a send slot.
        #expect(path.handle(Self.query("example.org")))
        let cached = try DNSMessage.parse(path.slot)
        #expect(cached.answers.count == 1)
        #expect(!cached.header.isAuthoritative && cached.header.recursionAvailable && cached.header.flags & 0x40 == 0)
    }

    /// RFC 6840 §5.7: the upstream's AD for a client that set DO or AD, not for one that
    /// set neither.
    @Test func theUpstreamsADReachesClientsThatSetDOOrAD() throws {
        let fixture = F()
        let signed = F.a("signed.example.org", 0x0102_0304)
        for dnssecOK in [false, true] {
            let pending = try #require(fixture.receive(Self.query("signed.example.org", dnssecOK: dnssecOK)).pending)
            let first = try #require(
                fixture.pipeline.complete(
                    pending, reply: Self.reply(to: pending, answers: [signed], authenticData: true), now: F.noon
                ).replyMessage)
            #expect(first.header.authenticData == dnssecOK, "DO \(dnssecOK)")
        }
        func cached(_ packet: [UInt8]) throws -> DNSMessage {
            guard case .reply(let bytes) = fixture.receive(packet) else { throw DNSSECTestError.notFromTheCache }
            return try DNSMessage.parse(bytes)
        }
        #expect(try cached(Self.query("signed.example.org", dnssecOK: true)).header.authenticData)
        #expect(try cached(Self.query("signed.example.org", authenticData: true)).header.authenticData)
        #expect(try !cached(Self.query("signed.example.org")).header.authenticData)
        #expect(try !cached(Self.query("signed.example.org", edns: false)).header.authenticData)
        #expect(try cached(Self.query("signed.example.org", authenticData: true, edns: false)).header.authenticData)
    }

    /// RFC 4035 §3.2.3: what this server changed is not what the upstream vouched for.
    @Test func adIsClearedOnEveryAnswerTheGatewayChanged() throws {
        let svcb = try RData.SVCB(
            priority: 1, target: .root,
            params: [(key: .alpn, value: [2, 0x68, 0x32]), (key: .ech, value: [1, 2, 3, 4])])
        for unfiltered in [false, true] {
            let fixture = F(unfiltered: unfiltered)
            let pending = try #require(fixture.receive(Self.query("svc.example.org", .https, dnssecOK: true)).pending)
            let record = ResourceRecord(name: try DNSName("svc.example.org"), ttl: 300, rdata: .https(svcb))
            let answer = try #require(
                fixture.pipeline.complete(
                    pending, reply: Self.reply(to: pending, answers: [record], authenticData: true), now: F.noon
                ).replyMessage)
            let keys = answer.answers.first?.rdata.svcb.map { Array($0.params.map(\.key)) }
            #expect(keys == (unfiltered ? [.alpn, .ech] : [.alpn]))
            #expect(answer.header.authenticData == unfiltered, "ech removed: AD cleared")
        }

        // A local address screened out (DNS rebinding).
        let fixture = F()
        let pending = try #require(fixture.receive(Self.query("mixed.example.org", dnssecOK: true)).pending)
        let screened = try #require(
            fixture.pipeline.complete(
                pending,
                reply: Self.reply(
                    to: pending,
                    answers: [F.a("mixed.example.org", 0xC0A8_0105), F.a("mixed.example.org", 0x0102_0304)],
                    authenticData: true),
                now: F.noon
            ).replyMessage)
        #expect(screened.answers.count == 1)
        #expect(!screened.header.authenticData)

        // A record outside the question's chain cut when cached.
        let cut = try #require(fixture.receive(Self.query("chain.example.org", dnssecOK: true)).pending)
        let chainAnswer = try #require(
            fixture.pipeline.complete(
                cut,
                reply: Self.reply(
                    to: cut, answers: [F.a("chain.example.org", 0x0102_0304), F.a("other.example.org", 0x0102_0305)],
                    authenticData: true),
                now: F.noon
            ).replyMessage)
        #expect(chainAnswer.answers.count == 1)
        #expect(!chainAnswer.header.authenticData)

        // Blocks, rewrites and local answers are made here: never AD, whatever the client set.
        let strict = F(policy: F.strict)
        for name in ["blocked.example", "www.google.com", "printer.lan"] {
            let reply = try #require(
                strict.receive(Self.query(name, .txt, dnssecOK: true, authenticData: true)).replyMessage)
            #expect(!reply.header.authenticData, "\(name)")
            #expect(reply.header.recursionAvailable && !reply.header.isAuthoritative)
        }
    }

    /// RFC 3225 §3: DO copied into the OPT of every answer to a query that had one, and no
    /// other flag bit echoed.
    @Test func doIsCopiedIntoEveryAnswersOPT() throws {
        for dnssecOK in [false, true] {
            let strict = F(policy: F.strict)
            func edns(_ step: QueryPipeline.Step, _ what: String) -> EDNS? {
                let reply = step.replyMessage
                #expect(reply != nil, "\(what): an answer")
                return reply?.edns
            }
            func expectDO(_ step: QueryPipeline.Step, _ what: String) {
                let opt = edns(step, what)
                #expect(opt?.dnssecOK == dnssecOK, "\(what), DO \(dnssecOK)")
                #expect(opt?.flags == (dnssecOK ? 0x8000 : 0), "\(what): no other flag echoed")
            }
            let flags: UInt16 = (dnssecOK ? 0x8000 : 0) | 0x4001
            func ask(_ name: String, _ type: DNSType = .a) -> [UInt8] {
                Self.query(name, type, ednsFlags: flags)
            }
            expectDO(strict.receive(ask("blocked.example")), "a block")
            expectDO(strict.receive(ask("adult.example", .aaaa)), "a category block")
            expectDO(strict.receive(ask("www.google.com", .txt)), "a rewrite's CNAME")
            expectDO(strict.receive(ask("www.google.com", .https)), "a rewrite's NODATA")
            expectDO(strict.receive(ask("printer.lan")), "a local answer")
            expectDO(strict.receive(ask("example.org"), from: IPAddress("203.0.113.9")!), "a refusal")
            var badVersion = ask("example.org")
            badVersion[badVersion.count - 5] = 1
            expectDO(strict.receive(badVersion), "BADVERS")

            let pending = try #require(strict.receive(ask("example.org")).pending)
            expectDO(strict.pipeline.complete(pending, reply: nil, now: F.noon), "SERVFAIL")
            let answered = F.reply(to: pending, answers: [F.a("example.org", 0x0102_0304)])
            expectDO(strict.pipeline.complete(pending, reply: answered, now: F.noon), "an upstream answer")
            expectDO(strict.receive(ask("example.org")), "a cached answer")
            let rewrite = try #require(strict.receive(ask("www.google.com")).pending)
            let target = F.reply(to: rewrite, answers: [F.a("forcesafesearch.google.com", 0xD8EF_2678)])
            expectDO(strict.pipeline.complete(rewrite, reply: target, now: F.noon), "a rewrite's addresses")
            expectDO(strict.receive(ask("www.google.com")), "a rewrite's addresses from the cache")

            // The send-slot path writes its own OPT.
            let path = try DatagramPath(F())
            path.upstream.answers[try DNSName("slot.example.org")] = [F.a("slot.example.org", 0x0102_0304)]
            path.handle(ask("slot.example.org"))
            #expect(path.handle(ask("slot.example.org")), "from the cache into a send slot")
            let slot = try DNSMessage.parse(path.slot)
            #expect(slot.edns?.dnssecOK == dnssecOK && slot.edns?.flags == (dnssecOK ? 0x8000 : 0))
        }
    }
}

enum DNSSECTestError: Error {
    case notFromTheCache
}
