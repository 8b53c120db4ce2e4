import DNSWire
import TestSupport
import Testing

@testable import DNSProxy

/// The answer cache's map: least recently used out first, found by question whatever the
/// upstream's letter case, and the same as a plain model through any run of stores,
/// lookups and removals.
@Suite(.blocking) struct ResponseCacheTests {
    static func key(_ name: String, _ type: DNSType = .a, dnssecOK: Bool = false) -> CacheKey {
        CacheKey(DNSQuestion(name: try! DNSName(name), type: type), dnssecOK: dnssecOK, checkingDisabled: false)
    }

    /// An upstream's answer to `name` as it wrote it (case included), one A record.
    static func entry(_ name: String, _ type: DNSType = .a, address: UInt32 = 0xC000_0201) -> CacheEntry {
        var header = DNSHeader(id: 7)
        header.isResponse = true
        var writer = DNSMessageWriter(header: header, edns: nil)
        writer.addQuestion(DNSQuestion(name: try! DNSName(name), type: type))
        writer.addRecord(
            ResourceRecord(name: try! DNSName(name), ttl: 300, rdata: .a(RData.IPv4(address))), to: .answer)
        return CacheEntry.make(from: writer.finish(), now: 0, minTTL: 0, maxTTL: 86_400)!
    }

    static func isMiss(_ lookup: ResponseCache.Lookup) -> Bool {
        if case .miss = lookup { return true }
        return false
    }

    @Test func theLeastRecentlyUsedGoesFirst() {
        let cache = ResponseCache(capacity: 3, serveStaleMax: 0)
        for name in ["a.example", "b.example", "c.example"] { cache.store(Self.key(name), Self.entry(name)) }
        _ = cache.lookup(Self.key("a.example"), now: 1)
        cache.store(Self.key("d.example"), Self.entry("d.example"))
        #expect(cache.count == 3)
        #expect(Self.isMiss(cache.lookup(Self.key("b.example"), now: 1)), "b should have been evicted")
        #expect(!Self.isMiss(cache.lookup(Self.key("a.example"), now: 1)), "a was used recently")
    }

    @Test func anUpstreamsLetterCaseIsFoldedAndTheKeysFlagsCount() throws {
        let cache = ResponseCache(capacity: 10, serveStaleMax: 0)
        cache.store(Self.key("www.example.org"), Self.entry("WwW.ExAmple.ORG"))
        guard case .fresh(let entry, _) = cache.lookup(Self.key("www.example.org"), now: 1) else {
            Issue.record("an answer whose question differs only in case is the question's")
            return
        }
        let question = try DNSMessage.parse(entry.response).questions[0]
        #expect(question.name.wire == (try DNSName("www.example.org")).wire, "stored lowercased")
        #expect(Self.isMiss(cache.lookup(Self.key("www.example.org", dnssecOK: true), now: 1)), "DO is its own key")
        #expect(Self.isMiss(cache.lookup(Self.key("www.example.org", .aaaa), now: 1)), "so is the type")
    }

    @Test func anAnswerToAnotherQuestionIsNotKept() {
        let cache = ResponseCache(capacity: 10, serveStaleMax: 0)
        cache.store(Self.key("example.org"), Self.entry("example.com"))
        cache.store(Self.key("example.org", .aaaa), Self.entry("example.org", .a))
        cache.store(Self.key("www.example.org"), Self.entry("example.org"))
        #expect(cache.count == 0)
    }

    /// Random stores, lookups and removals (by expiry) on one shard against a model: an
    /// array of names, most recent last. Small capacities and many names make evictions and
    /// the table's backward shifts frequent.
    @Test(arguments: [1, 2, 7, 64])
    func behavesAsAPlainLRUModel(capacity: Int) {
        var generator = SplitMix(seed: UInt64(capacity))
        let cache = ResponseCache(capacity: capacity, serveStaleMax: 0)
        var model: [String] = []
        let names = (0..<(capacity * 3 + 5)).map { "n\($0).example" }
        for step in 0..<20_000 {
            let name = names[Int(generator.next() % UInt64(names.count))]
            switch generator.next() % 3 {
            case 0:
                cache.store(Self.key(name), Self.entry(name, address: UInt32(step)))
                model.removeAll { $0 == name }
                if model.count == capacity { model.removeFirst() }
                model.append(name)
            case 1:
                let found = cache.lookup(Self.key(name), now: 1)
                #expect(Self.isMiss(found) == !model.contains(name), "step \(step): \(name)")
                if let index = model.firstIndex(of: name) { model.append(model.remove(at: index)) }
            default:
                // An expired entry is removed when looked up.
                if case .fresh = cache.lookup(Self.key(name), now: 301_000) {
                    Issue.record("step \(step): \(name) outlived its TTL")
                }
                model.removeAll { $0 == name }
            }
            #expect(cache.count == model.count)
        }
    }

    /// Sixteen shards, each table grown many times: every name stored is found again.
    @Test func tenThousandAnswersAreAllFoundAgain() {
        let cache = ResponseCache(capacity: 100_000, serveStaleMax: 0)
        let names = (0..<10_000).map { "host-\($0).example.net" }
        for name in names { cache.store(Self.key(name), Self.entry(name)) }
        #expect(names.allSatisfy { !Self.isMiss(cache.lookup(Self.key($0), now: 1)) })
        #expect(Self.isMiss(cache.lookup(Self.key("host-10000.example.net"), now: 1)))
    }
}

/// A small seeded generator, so a failing run can be repeated.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
