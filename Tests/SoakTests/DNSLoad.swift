import TestSupport

/// DNS over UDP from one device: one question at a time, each answer checked; a tenth of
/// the packets malformed.
final class UDPLoad: @unchecked Sendable {
    /// How long an answer may take on loopback before the question counts as unanswered.
    static let timeout = 3.0

    private let client: String
    private let port: UInt16
    private let ledger: SoakLedger
    private let timeline: PolicyTimeline
    private var generator: SeededGenerator
    private var socket: LoopbackSocket?
    private var nextID: UInt16 = 0

    init(client: String, port: UInt16, ledger: SoakLedger, timeline: PolicyTimeline, seed: UInt64) {
        self.client = client
        self.port = port
        self.ledger = ledger
        self.timeline = timeline
        generator = SeededGenerator(seed: seed)
    }

    func step() {
        if socket == nil { socket = LoopbackSocket(tcp: false, from: client, to: port, timeout: Self.timeout) }
        guard let socket else {
            ledger.unanswered("no UDP socket from \(client)")
            return
        }
        if Int.random(in: 0..<10, using: &generator) == 0 {
            // Whatever comes back (FORMERR, NOTIMP, nothing) carries an ID no question waits for.
            socket.send(DNSProbe.malformed(using: &generator))
            ledger.count(.malformedDNS)
            return
        }
        let ask = DNSAsk.next(for: client, using: &generator)
        nextID &+= 1
        let id = nextID
        let before = timeline.now
        let sentAt = monotonicSeconds()
        socket.send(DNSProbe.query(ask.name, type: ask.type, id: id))
        var outcome: DNSProbe.Outcome?
        while monotonicSeconds() - sentAt < Self.timeout, let reply = socket.receive() {
            guard DNSProbe.id(reply) == id else { continue }
            outcome = DNSProbe.outcome(reply)
            break
        }
        ledger.count(.udpQueries)
        ask.judge(outcome, before: before, after: timeline.now, sentAt: sentAt, via: "udp", ledger: ledger)
    }

    func quiesce() { socket = nil }
}

/// DNS over TCP from both devices: connections with one to four pipelined questions, some
/// kept open and idle afterwards, and a share of hostile ones (a zero-length frame,
/// garbage, a message cut short, a length prefix alone).
final class TCPLoad: @unchecked Sendable {
    private let port: UInt16
    private let ledger: SoakLedger
    private let timeline: PolicyTimeline
    private var generator: SeededGenerator
    /// Connections held idle, and when the soak closes them (the gateway may first).
    private var idle: [(socket: LoopbackSocket, closeAt: Double)] = []
    private var nextID: UInt16 = 0
    /// Held at once, below the per-client cap of 16.
    static let idleMax = 6

    init(port: UInt16, ledger: SoakLedger, timeline: PolicyTimeline, seed: UInt64) {
        self.port = port
        self.ledger = ledger
        self.timeline = timeline
        generator = SeededGenerator(seed: seed)
    }

    func step() {
        let now = monotonicSeconds()
        idle.removeAll { $0.closeAt < now || $0.socket.peerClosed }
        let client = Bool.random(using: &generator) ? SoakNames.localClient : SoakNames.syncedClient
        guard let socket = LoopbackSocket(tcp: true, from: client, to: port, timeout: UDPLoad.timeout) else {
            ledger.unanswered("TCP connect from \(client)")
            return
        }
        let roll = Int.random(in: 0..<100, using: &generator)
        if roll < 15 {
            hostile(socket)
            return
        }
        let asks = (0..<Int.random(in: 1...4, using: &generator)).map { _ in DNSAsk.next(for: client, using: &generator)
        }
        var ids: [UInt16] = []
        var stream: [UInt8] = []
        for ask in asks {
            nextID &+= 1
            ids.append(nextID)
            let query = DNSProbe.query(ask.name, type: ask.type, id: nextID)
            stream += [UInt8(query.count >> 8), UInt8(query.count & 0xFF)] + query
        }
        let before = timeline.now
        let sentAt = monotonicSeconds()
        socket.send(stream)
        var replies: [UInt16: DNSProbe.Outcome] = [:]
        var received: [UInt8] = []
        while replies.count < asks.count, monotonicSeconds() - sentAt < UDPLoad.timeout,
            let more = socket.receive(), !more.isEmpty
        {
            received += more
            while received.count >= 2, received.count >= 2 + (Int(received[0]) << 8 | Int(received[1])) {
                let length = Int(received[0]) << 8 | Int(received[1])
                let reply = Array(received[2..<(2 + length)])
                received.removeFirst(2 + length)
                replies[DNSProbe.id(reply)] = DNSProbe.outcome(reply)
            }
        }
        let after = timeline.now
        for (ask, id) in zip(asks, ids) {
            ledger.count(.tcpQueries)
            ask.judge(replies[id], before: before, after: after, sentAt: sentAt, via: "tcp", ledger: ledger)
        }
        if roll < 35, idle.count < Self.idleMax {
            idle.append((socket, monotonicSeconds() + Double.random(in: 3...20, using: &generator)))
            ledger.count(.idleOpened)
        }
    }

    private func hostile(_ socket: LoopbackSocket) {
        ledger.count(.malformedDNS)
        switch Int.random(in: 0..<5, using: &generator) {
        case 0: socket.send([0, 0])
        case 1:
            let garbage = (0..<Int.random(in: 1...300, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            socket.send([UInt8(garbage.count >> 8), UInt8(garbage.count & 0xFF)] + garbage)
            _ = socket.receive()
        case 2:
            let query = DNSProbe.query("origin.test", id: 1)
            socket.send([UInt8(query.count >> 8), UInt8(query.count & 0xFF)] + query.prefix(query.count / 2))
        case 3: socket.send([0xFF])
        default:
            // A message that never completes: the gateway must drop it after its read timeout.
            socket.send([0x01, 0x00, 0x12, 0x34])
            if idle.count < Self.idleMax {
                idle.append((socket, monotonicSeconds() + Double.random(in: 3...12, using: &generator)))
                ledger.count(.idleOpened)
            }
        }
    }

    func quiesce() { idle.removeAll() }
}
