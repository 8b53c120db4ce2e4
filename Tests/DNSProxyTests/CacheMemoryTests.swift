import DNSWire
import TestSupport
import Testing

@testable import DNSProxy

/// What a cached answer keeps on the heap, counted by the test executable's malloc (the
/// bytes of every chunk made and not freed), not read from the resident set: the answer
/// cache is most of what a gateway's heap grows by (docs/performance.md#memory-after-load).
@Suite(.blocking) struct CacheMemoryTests {
    /// An upstream's reply for `name`: one A record, or a CNAME to a CDN's name and its A.
    static func reply(_ name: String, viaCNAME: Bool) -> [UInt8] {
        var header = DNSHeader(id: 7)
        header.isResponse = true
        header.recursionAvailable = true
        var writer = DNSMessageWriter(header: header, edns: EDNS(udpPayloadSize: 1232))
        writer.addQuestion(DNSQuestion(name: try! DNSName(name), type: .a))
        var owner = try! DNSName(name)
        if viaCNAME {
            let target = try! DNSName("edge-\(name.count).cdn-provider.example.net")
            writer.addRecord(ResourceRecord(name: owner, ttl: 300, rdata: .cname(target)), to: .answer)
            owner = target
        }
        writer.addRecord(ResourceRecord(name: owner, ttl: 300, rdata: .a(RData.IPv4(0xC000_0201))), to: .answer)
        return writer.finish()
    }

    /// Bytes each answer keeps, stored one after the other into a cache sized for them.
    static func bytesPerAnswer(count: Int, viaCNAME: Bool) throws -> Int {
        let names = (0..<count).map { "www.site-\($0).example.com" }
        let replies = names.map { reply($0, viaCNAME: viaCNAME) }
        let questions = try names.map { DNSQuestion(name: try DNSName($0), type: .a) }
        let cache = ResponseCache(capacity: 100_000, serveStaleMax: 0)
        let bytes = Allocations.retainedBytes {
            for index in 0..<count {
                guard let entry = CacheEntry.make(from: replies[index], now: 0, minTTL: 0, maxTTL: 86_400) else {
                    continue
                }
                cache.store(CacheKey(questions[index], dnssecOK: false, checkingDisabled: false), entry)
            }
        }
        #expect(cache.count == count)
        return bytes / count
    }

    /// With a dictionary keyed by a copy of the name, an array per entry for its TTL
    /// offsets and a 112-byte entry object, these were 467 and 674 bytes; now 273 and 464.
    @Test(.enabled(if: Allocations.counted, "a sanitizer's runtime owns malloc"))
    func aCachedAnswerKeepsFewBytes() throws {
        let plain = try Self.bytesPerAnswer(count: 10_000, viaCNAME: false)
        let chained = try Self.bytesPerAnswer(count: 10_000, viaCNAME: true)
        #expect(plain <= 300, "one A record: \(plain) bytes")
        #expect(chained <= 500, "a CNAME and an A record: \(chained) bytes")
    }
}
