import TestSupport

/// The HTTP proxy from both devices: CONNECT tunnels to the origin with a request through
/// them, plain-HTTP requests (some two on one keep-alive connection), blocked hosts both
/// ways, the hit name from the synced device, malformed heads, and idle connections (some
/// with half a head) held for up to 70 s.
final class ProxyLoad: @unchecked Sendable {
    static let timeout = 5.0
    /// Held at once, well below the per-device cap of 256.
    static let idleMax = 12

    private let port: UInt16
    private let originPort: UInt16
    private let ledger: SoakLedger
    private var generator: SeededGenerator
    private var idle: [(socket: LoopbackSocket, closeAt: Double)] = []
    private let malformed = MalformedHeads.all.compactMap(\.request)

    init(port: UInt16, originPort: UInt16, ledger: SoakLedger, seed: UInt64) {
        self.port = port
        self.originPort = originPort
        self.ledger = ledger
        generator = SeededGenerator(seed: seed)
    }

    private var origin: String { "origin.test:\(originPort)" }

    func step() {
        let now = monotonicSeconds()
        idle.removeAll { $0.closeAt < now || $0.socket.peerClosed }
        let client = Bool.random(using: &generator) ? SoakNames.localClient : SoakNames.syncedClient
        guard let socket = LoopbackSocket(tcp: true, from: client, to: port, timeout: Self.timeout) else {
            ledger.unanswered("proxy connect from \(client)")
            return
        }
        let roll = Int.random(in: 0..<100, using: &generator)
        switch roll {
        case 0..<25: tunnel(socket, client)
        case 25..<45: plain(socket, client, keep: roll < 32)
        case 45..<55:
            refused(
                socket, "CONNECT always.blocked.test:443 HTTP/1.1\r\nHost: always.blocked.test:443\r\n\r\n", client,
                hit: false)
        case 55..<65:
            refused(
                socket, "GET http://always.blocked.test/ HTTP/1.1\r\nHost: always.blocked.test\r\n\r\n", client,
                hit: false)
        case 65..<80 where client == SoakNames.syncedClient:
            let request =
                Bool.random(using: &generator)
                ? "CONNECT \(SoakNames.hit):443 HTTP/1.1\r\nHost: \(SoakNames.hit):443\r\n\r\n"
                : "GET http://\(SoakNames.hit)/page HTTP/1.1\r\nHost: \(SoakNames.hit)\r\n\r\n"
            refused(socket, request, client, hit: true)
        case 80..<90: malformedHead(socket)
        default: hold(socket, partial: Bool.random(using: &generator))
        }
    }

    private func tunnel(_ socket: LoopbackSocket, _ client: String) {
        ledger.count(.connects)
        socket.send(Array("CONNECT \(origin) HTTP/1.1\r\nHost: \(origin)\r\n\r\n".utf8))
        guard let head = HTTPReply.read(socket, headOnly: true) else {
            return ledger.unanswered("CONNECT \(origin) from \(client)")
        }
        guard head.status == 200 else { return ledger.wrong("CONNECT \(origin) from \(client): \(head.head)") }
        socket.send(Array("GET /tunnel HTTP/1.1\r\nHost: \(origin)\r\nConnection: close\r\n\r\n".utf8))
        guard let reply = HTTPReply.read(socket) else {
            return ledger.unanswered("GET through a tunnel from \(client)")
        }
        check(
            reply.status == 200 && reply.body.hasPrefix("origin saw GET /tunnel"),
            "GET through a tunnel from \(client)", reply)
    }

    private func plain(_ socket: LoopbackSocket, _ client: String, keep: Bool) {
        for index in 0..<(keep ? 2 : 1) {
            ledger.count(.plainRequests)
            socket.send(Array("GET http://\(origin)/plain/\(index) HTTP/1.1\r\nHost: \(origin)\r\n\r\n".utf8))
            guard let reply = HTTPReply.read(socket) else {
                return ledger.unanswered("plain GET \(index) from \(client)")
            }
            check(
                reply.status == 200 && reply.body.hasPrefix("origin saw GET /plain/\(index)"),
                "plain GET from \(client)", reply)
        }
        // A keep-alive connection left idle: the gateway closes it after 60 s, or the soak does.
        if keep { hold(socket, partial: false) }
    }

    /// A request the policy refuses: 403 with the block header. A refusal of the hit name is a hit.
    private func refused(_ socket: LoopbackSocket, _ request: String, _ client: String, hit: Bool) {
        ledger.count(request.hasPrefix("CONNECT") ? .connects : .plainRequests)
        let line = String(request.prefix { $0 != "\r" })
        socket.send(Array(request.utf8))
        guard let reply = HTTPReply.read(socket) else { return ledger.unanswered("\(line) from \(client)") }
        let blockedBy = reply.header("X-Phosra-Block") ?? ""
        guard reply.status == 403, blockedBy.hasPrefix("blocked_domain:") else {
            return ledger.wrong("\(line) from \(client): \(reply.head)")
        }
        ledger.count(.answersChecked)
        if hit { ledger.hit(.proxy) }
    }

    /// A head from the malformed-head table: 400 (431 for one too large, 505 for a version
    /// other than HTTP/1.x), or a reset when the gateway closed while the soak was still
    /// sending a head over its limit.
    private func malformedHead(_ socket: LoopbackSocket) {
        ledger.count(.malformedHeads)
        let head = malformed.randomElement(using: &generator)!
        let sent = socket.send(head)
        let reply = HTTPReply.read(socket, headOnly: true)
        if head.count <= 16_384, sent, let reply, !(400..<500).contains(reply.status), reply.status != 505 {
            ledger.wrong("malformed head \(String(decoding: head.prefix(40), as: UTF8.self)): \(reply.head)")
        }
    }

    private func hold(_ socket: LoopbackSocket, partial: Bool) {
        guard idle.count < Self.idleMax else { return }
        if partial { socket.send(Array("GET http://\(origin)/ HTTP/1.1\r\nHost: or".utf8)) }
        idle.append((socket, monotonicSeconds() + Double.random(in: 5...70, using: &generator)))
        ledger.count(.idleOpened)
    }

    private func check(_ good: Bool, _ what: String, _ reply: HTTPReply) {
        if good {
            ledger.count(.answersChecked)
        } else {
            ledger.wrong("\(what): \(reply.head) \(reply.body.prefix(80))")
        }
    }

    func quiesce() { idle.removeAll() }
}

/// One HTTP/1.1 response as read from a socket: head, and the body by Content-Length or
/// to the end of the connection.
struct HTTPReply {
    let status: Int
    let head: String
    let body: String

    func header(_ name: String) -> String? {
        head.split(separator: "\r\n").dropFirst().first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
    }

    /// nil when no complete head came before the timeout or the connection ended.
    static func read(_ socket: LoopbackSocket, headOnly: Bool = false) -> HTTPReply? {
        var received: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            guard let more = socket.receive(), !more.isEmpty else { return nil }
            received += more
            headEnd = find([13, 10, 13, 10], in: received).map { $0 + 4 }
        }
        guard let headEnd else { return nil }
        let head = String(decoding: received[..<(headEnd - 4)], as: UTF8.self)
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        var reply = HTTPReply(status: status, head: head, body: "")
        guard !headOnly else { return reply }
        var body = Array(received[headEnd...])
        if let length = reply.header("Content-Length").flatMap({ Int($0) }) {
            while body.count < length, let more = socket.receive(), !more.isEmpty { body += more }
        } else {
            while let more = socket.receive(), !more.isEmpty { body += more }
        }
        reply = HTTPReply(status: status, head: head, body: String(decoding: body, as: UTF8.self))
        return reply
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
