import DNSWire
import TestSupport
import Testing

@testable import DNSProxy

/// A datagram answered in place says exactly what the same packet answered through
/// `receive` (an array) says.
@Suite(.blocking) struct DatagramPathTests {
    typealias F = PipelineFixture

    /// The answer the array path gives now, for comparison.
    func arrayAnswer(_ path: DatagramPath, _ query: [UInt8]) -> [UInt8]? {
        guard case .reply(let bytes) = path.fixture.receive(query) else { return nil }
        return bytes
    }

    @Test func aCachedAnswerInTheSlotIsTheArrayPathsAnswer() throws {
        let path = try DatagramPath()
        path.upstream.answers[try DNSName("example.org")] = [
            F.cname("example.org", "cdn.example.net"), F.a("cdn.example.net", 0xC000_0201),
        ]
        let asked = [
            F.query("example.org"), F.query("Example.ORG", id: 9), F.query("example.org", edns: false),
        ]
        path.handle(asked[0])
        #expect(path.sent.count == 1, "the first went to the upstream")
        for query in asked {
            #expect(path.handle(query), "from the cache, into the slot")
            #expect(path.slot == arrayAnswer(path, query))
        }
    }

    /// The policy zone's wall time is taken for every query; the zone itself is read once
    /// per offset change (docs/performance.md#where-the-slow-answers-are).
    @Test func theLoopReadsThePolicyZoneOnceNotPerQuery() throws {
        let path = try DatagramPath(F(policy: F.strict))
        path.upstream.answers[try DNSName("example.org")] = [F.a("example.org", 0xC000_0201)]
        for _ in 0..<10 {
            for name in ["www.adult.example", "a.blocked.example", "example.org"] { path.handle(F.query(name)) }
        }
        #expect(path.driver.scratch.clock.zoneReads == 1)
    }

    @Test(arguments: [BlockMode.nxdomain, .null, .refused, .address(v4: 0x0A00_0002, v6: (0, 2))])
    func aBlockAnswerInTheSlotIsTheArrayPathsAnswer(mode: BlockMode) throws {
        let path = try DatagramPath(F(policy: F.strict, mode: mode))
        for name in ["www.Adult.example", "a.blocked.example"] {
            for type in [DNSType.a, .aaaa, .txt] {
                for edns in [true, false] {
                    let query = F.query(name, type, edns: edns)
                    #expect(path.handle(query), "\(mode) \(name) \(type)")
                    #expect(path.slot == arrayAnswer(path, query), "\(mode) \(name) \(type) edns \(edns)")
                }
            }
        }
        let texts = Set(path.fixture.hits.all.map { "\($0.name) \($0.reasonText) \($0.rule ?? "")" })
        #expect(
            texts == [
                "www.adult.example category:adult adult.example",
                "a.blocked.example blocked_domain:blocked.example blocked.example",
            ])
        #expect(path.fixture.hits.all.count == 24, "every block a hit, on both paths")
        let answer = try DNSMessage.parse(path.slot)
        #expect(answer.extendedErrorTexts == (answer.edns == nil ? [] : ["blocked_domain:blocked.example"]))
    }

    @Test func aRewriteInTheSlotIsTheArrayPathsAnswer() throws {
        let path = try DatagramPath(F(policy: F.strict))
        path.upstream.answers[try DNSName("forcesafesearch.google.com")] = [
            F.a("forcesafesearch.google.com", 0xD8EF_2678)
        ]
        for target in ["restrict.youtube.com", "restrictmoderate.youtube.com"] {
            path.upstream.answers[try DNSName(target)] = [
                F.cname(target, "youtube-ui.l.google.com", ttl: 200),
                F.a("youtube-ui.l.google.com", 0xD8EF_2679, ttl: 100),
            ]
        }
        for name in ["www.Google.com", "www.youtube.com"] {
            for edns in [true, false] {
                let query = F.query(name, edns: edns)
                path.handle(query)
                #expect(path.handle(query), "\(name): from the cache, into the slot")
                #expect(path.slot == arrayAnswer(path, query), "\(name) edns \(edns)")
            }
        }
        let answer = try DNSMessage.parse(path.slot)
        #expect(answer.answers.map(\.type) == [.cname, .cname, .a], "the rewrite, then the target's chain")
        #expect(answer.answers.map(\.ttl) == [100, 200, 100])
    }

    @Test func aPacketOutsideTheCommonFormTakesTheArrayPath() throws {
        let path = try DatagramPath()
        var truncatedQuery = F.query("example.org")
        truncatedQuery.removeLast()
        var response = F.query("example.org")
        response[2] |= 0x80
        #expect(!path.handle(truncatedQuery))
        #expect(path.sent.last == arrayAnswer(path, truncatedQuery), "FORMERR, from a copy")
        #expect(!path.handle(response))
        #expect(path.sent.count == 1, "a response is dropped")
    }
}
