import DNSUpstream
import DNSWire
import DomainMatch
import Locks
import Policy
import Zoneinfo

@testable import DNSProxy

/// Collects hits for assertions.
final class CollectingHits: HitRecorder {
    private let hits = Lock<[Hit]>([])
    func record(_ hit: Hit) { hits.withLock { $0.append(hit) } }
    var all: [Hit] { hits.withLock { $0 } }
}

/// A pipeline over inline lists and a policy, with hand-made queries and replies.
struct PipelineFixture {
    let pipeline: QueryPipeline
    let hits = CollectingHits()
    static let client = IPAddress("192.168.1.20")!
    /// 2026-11-30 12:00 UTC, a Monday.
    static let noon = Now(monotonicMilliseconds: 1_000_000, unixSeconds: 1_796_040_000)

    init(
        policy: CompiledPolicy = CompiledPolicy(), options: DecisionOptions = DecisionOptions(),
        mode: BlockMode = .nxdomain,
        blockTTL: UInt32 = 10, lists: [Category: [String]] = [.adult: ["adult.example"], .proxy: ["vpn.example"]],
        localForward: [String] = [], rate: Int = 1000, cacheSize: Int = 1000, unfiltered: Bool = false
    ) {
        var trieLists = Array(repeating: [DomainName](), count: Category.allCases.count)
        for (category, names) in lists { trieLists[category.rawValue] = names.map { try! QueryName.parse($0) } }
        let trie = LabelTrie(lists: trieLists, listNames: Category.allCases.map(\.id))
        let rules = unfiltered ? PolicyRules.unfiltered : PolicyRules(policy)
        let engine = DecisionEngine(
            system: SystemRules(options), categories: CategorySet(matcher: trie, present: Set(lists.keys)),
            zone: .utc, profiles: ProfileTable(single: rules))
        let zones = LocalZones(forwarded: Set(localForward.map { try! QueryName.parse($0) }))
        let snapshot = ProxySnapshot(
            engine: engine, answers: AnswerBuilder(mode: mode, blockTTL: blockTTL), localZones: zones,
            rateLimiter: RateLimiter(rate: rate))
        pipeline = QueryPipeline(
            snapshot: snapshot, cache: ResponseCache(capacity: cacheSize, serveStaleMax: 86_400_000),
            hits: hits)
    }

    static func query(_ name: String, _ type: DNSType = .a, id: UInt16 = 0x1234, edns: Bool = true) -> [UInt8] {
        var header = DNSHeader(id: id)
        header.recursionDesired = true
        var writer = DNSMessageWriter(header: header, edns: edns ? EDNS(udpPayloadSize: 1232) : nil)
        writer.addQuestion(DNSQuestion(name: try! DNSName(name), type: type))
        return writer.finish()
    }

    /// An upstream reply to `pending` with these answer records.
    static func reply(
        to pending: PendingQuery, answers: [ResourceRecord], rcode: DNSRcode = .noError,
        authority: [ResourceRecord] = []
    ) -> [UInt8] {
        var header = DNSHeader(id: 7)
        header.isResponse = true
        header.recursionAvailable = true
        header.rcode = rcode
        var writer = DNSMessageWriter(header: header, edns: EDNS(udpPayloadSize: 1232))
        writer.addQuestion(pending.upstreamQuestion)
        for record in answers { writer.addRecord(record, to: .answer) }
        for record in authority { writer.addRecord(record, to: .authority) }
        return writer.finish()
    }

    static func a(_ name: String, _ address: UInt32, ttl: UInt32 = 300) -> ResourceRecord {
        ResourceRecord(name: try! DNSName(name), ttl: ttl, rdata: .a(RData.IPv4(address)))
    }

    static func cname(_ name: String, _ target: String, ttl: UInt32 = 300) -> ResourceRecord {
        ResourceRecord(name: try! DNSName(name), ttl: ttl, rdata: .cname(try! DNSName(target)))
    }

    func receive(
        _ packet: [UInt8], from client: IPAddress = PipelineFixture.client, now: Now = PipelineFixture.noon
    )
        -> QueryPipeline.Step
    {
        pipeline.receive(packet, from: client, overUDP: true, now: now)
    }
}

extension QueryPipeline.Step {
    var replyMessage: DNSMessage? {
        guard case .reply(let bytes) = self else { return nil }
        return try? DNSMessage.parse(bytes)
    }

    var pending: PendingQuery? {
        guard case .resolve(let pending) = self else { return nil }
        return pending
    }

    var isDrop: Bool {
        if case .drop = self { return true }
        return false
    }
}

extension DNSMessage {
    var extendedErrorTexts: [String] { ((try? edns?.extendedErrors()) ?? []).map(\.text) }
}
