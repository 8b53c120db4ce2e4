import DNSUpstream
import DNSWire
import DomainMatch
import EventLoop
import Locks
import Policy
import SystemIO
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
        localForward: [String] = [], rate: Int = 1000, cacheSize: Int = 1000, unfiltered: Bool = false,
        hits recorder: (any HitRecorder)? = nil, rebinding: RebindingGuard = RebindingGuard()
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
            rebinding: rebinding)
        pipeline = QueryPipeline(
            snapshot: snapshot, cache: ResponseCache(capacity: cacheSize, serveStaleMax: 86_400_000),
            rateLimit: rate, hits: recorder ?? hits)
    }

    /// Level strict (the adult category, safe search) with `blocked.example` on the block list.
    static var strict: CompiledPolicy {
        var policy = CompiledPolicy()
        policy.version = 1
        policy.webFilter.level = "strict"
        policy.webFilter.safeSearch = true
        policy.webFilter.blockedDomains = ["blocked.example"]
        return policy
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
        authority: [ResourceRecord] = [], additional: [ResourceRecord] = []
    ) -> [UInt8] {
        var header = DNSHeader(id: 7)
        header.isResponse = true
        header.recursionAvailable = true
        header.rcode = rcode
        var writer = DNSMessageWriter(header: header, edns: EDNS(udpPayloadSize: 1232))
        writer.addQuestion(pending.upstreamQuestion)
        for record in answers { writer.addRecord(record, to: .answer) }
        for record in authority { writer.addRecord(record, to: .authority) }
        for record in additional { writer.addRecord(record, to: .additional) }
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

/// The UDP server's path through a real `QueryDriver` without a socket: a datagram handed
/// in where it lies, the answer written into a send slot of a `DatagramBatch` as
/// `UDPServer` does, and what goes the slow way (a copy, an upstream) collected in `sent`.
final class DatagramPath {
    let fixture: PipelineFixture
    let driver: QueryDriver
    let replies = DatagramBatch(slots: 4, slotSize: 4096)
    var sent: [[UInt8]] = []
    let upstream = ImmediateUpstream()
    private let loop: EventLoop
    private let peer = SocketAddress(ipv4: 0xC0A8_0114, port: 5353)

    init(_ fixture: PipelineFixture = PipelineFixture()) throws {
        self.fixture = fixture
        let clock = ManualClock(
            start: UInt64(PipelineFixture.noon.monotonicMilliseconds) * 1_000_000,
            wall: WallTime(unixSeconds: PipelineFixture.noon.unixSeconds))
        loop = try EventLoop(clock: clock)
        driver = QueryDriver(loop: loop, pipeline: fixture.pipeline, upstream: upstream)
    }

    /// Handles `packet`; true when its answer went into a send slot (then `slot`).
    @discardableResult
    func handle(_ packet: [UInt8]) -> Bool {
        replies.removeAll()
        packet.withUnsafeBytes { datagram in
            driver.handle(
                datagram: datagram, from: PipelineFixture.client,
                place: { answer in replies.append(to: peer) { answer.write(into: $0) } },
                sender: { { [unowned self] bytes in self.sent.append(bytes) } })
        }
        return replies.count == 1
    }

    /// The answer in the send slot.
    var slot: [UInt8] { Array(replies.bytes(at: 0)) }
}

/// An upstream that answers at once, with `answers` for the name asked (none: NXDOMAIN).
final class ImmediateUpstream: UpstreamResolving {
    var answers: [DNSName: [ResourceRecord]] = [:]

    func resolve(
        _ question: DNSQuestion, dnssecOK: Bool, checkingDisabled: Bool, upstreams: [UpstreamSpec]?,
        completion: @escaping ([UInt8]?) -> Void
    ) {
        var header = DNSHeader(id: 7)
        header.isResponse = true
        header.recursionAvailable = true
        let answers = self.answers[question.name] ?? []
        header.rcode = answers.isEmpty ? .nxDomain : .noError
        var writer = DNSMessageWriter(header: header, edns: EDNS(udpPayloadSize: 1232))
        writer.addQuestion(question)
        for record in answers { writer.addRecord(record, to: .answer) }
        if answers.isEmpty {
            writer.addRecord(AnswerBuilder.soa(owner: question.name, ttl: 300), to: .authority)
        }
        completion(writer.finish())
    }
}
