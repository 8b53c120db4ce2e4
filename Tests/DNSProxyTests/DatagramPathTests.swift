import DNSWire
import Testing

@testable import DNSProxy

/// A datagram answered in place says exactly what the same packet answered through
/// `receive` (an array) says.
@Suite struct DatagramPathTests {
    typealias F = PipelineFixture

    /// The answer the array path gives now, for comparison.
    func arrayAnswer(_ path: DatagramPath, _ query: [UInt8]) -> [UInt8]? {
        guard case .reply(let bytes) = path.fixture.receive(query) else { return nil }
        return bytes
    }

    @Test func aCachedAnswerInTheSlotIsTheArrayPathsAnswer() throws {
        let path = try DatagramPath()
        path.upstream.answers[try DNSName("example.org")] = [
            F.cname("example.org", "cdn.example.net"), F.a("cdn.example.net", 0x0A00_0001),
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
