import DNSWire
import EventLoop
import Glibc
import Locks
import Synchronization
import SystemIO

/// A tiny DNS server for the cases real servers will not act out: truncation, forged
/// replies, silence, SERVFAIL. UDP and TCP on one loopback port, on a loop of its own.
/// Every answer carries one A record, `answer`, so a test can tell who answered.
final class FakeUpstream: Sendable {
    enum Behavior: Sendable {
        /// Answers with `rcode` over UDP and TCP.
        case answer(DNSRcode)
        /// UDP: an empty reply with TC set; TCP: the full answer.
        case truncateOverUDP
        /// UDP: first a reply with the wrong ID and one asking another question (both
        /// claiming 6.6.6.6), and only 50 ms later the genuine one.
        case forgeFirst
        /// Never replies.
        case silent
        /// UDP answers; each TCP connection answers `answered` queries, then closes on
        /// the next without a reply (a server ending a kept-open connection).
        case closeTCP(after: Int)
    }

    static let forgedAnswer = "6.6.6.6"
    let address: SocketAddress
    let answer: RData.IPv4
    private let currentBehavior: Lock<Behavior>
    /// What it does now; tests may change it between queries.
    var behavior: Behavior {
        get { currentBehavior.withLock { $0 } }
        set { currentBehavior.withLock { $0 = newValue } }
    }
    let udpQueries = Atomic<Int>(0)
    let tcpQueries = Atomic<Int>(0)
    /// The last query received, as sent.
    let lastQuery = Lock<[UInt8]>([])
    let queryIDs = Lock<[UInt16]>([])

    var spec: String { address.description }

    init(on loop: EventLoop, behavior: Behavior, answer: RData.IPv4 = RData.IPv4(192, 0, 2, 7)) throws {
        currentBehavior = Lock(behavior)
        self.answer = answer
        let (udp, tcp) = try Self.bindPair()
        address = udp.address!
        let server = self
        try loop.runSync(timeout: 5_000_000_000) {
            try loop.register(
                udp.descriptor, interest: .read, handler: FakeUDPHandler(server: server, socket: udp, loop: loop))
            try loop.register(
                tcp.descriptor, interest: .read, handler: FakeTCPListener(server: server, socket: tcp, loop: loop))
        }
    }

    /// A UDP socket on a free port and a TCP listener on the same number (retried while
    /// TCP's is taken).
    private static func bindPair() throws -> (Socket, Socket) {
        for _ in 0..<10 {
            let udp = try Socket.udp(bindingTo: try SocketAddress("127.0.0.1:0"))
            if let tcp = try? Socket.listen(on: udp.address!) { return (udp, tcp) }
        }
        throw SystemError("bind", errno: EADDRINUSE, subject: "127.0.0.1 (no port free for UDP and TCP)")
    }

    /// The reply to `query` with `rcode`, `id` and, unless `empty`, the A record.
    func reply(
        to query: DNSQuery, id: UInt16? = nil, rcode: DNSRcode = .noError, truncated: Bool = false,
        empty: Bool = false, address: RData.IPv4? = nil, name: DNSName? = nil
    ) -> [UInt8] {
        var query = query
        if let id { query.header.id = id }
        if let name { query.question.name = name }
        var writer = DNSMessageWriter(responseTo: query, rcode: rcode, edns: query.edns.map { _ in EDNS() })
        writer.header.isTruncated = truncated
        if !empty {
            writer.addRecord(
                ResourceRecord(name: query.question.name, ttl: 60, rdata: .a(address ?? answer)), to: .answer)
        }
        return writer.finish()
    }

    func record(_ packet: [UInt8]) -> DNSQuery? {
        lastQuery.withLock { $0 = packet }
        guard let query = try? DNSQuery.parse(packet) else { return nil }
        queryIDs.withLock { $0.append(query.header.id) }
        return query
    }
}
