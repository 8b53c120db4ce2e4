import Bytes
import DomainMatch
import EventLoop
import Glibc
import HTTP1
import SystemIO
import TLS

/// The page's listeners on one event loop of their own (docs/parent-page.md#listeners):
/// HTTPS on `web_listen`, on `web_http_listen` plain HTTP that only redirects to it, and on
/// `child_listen` plain HTTP for the child's page (docs/requests-and-notifications.md).
/// Bounded like the proxy: a head of at most 8 KiB and a body of at most 16 KiB, each
/// request whole within `requestTimeout` of its first byte (a slow client is closed, not
/// waited for), at most `perClient` connections per address and `total` in all (beyond
/// them a new connection is closed at once), an idle keep-alive connection closed after
/// `idleTimeout`.
public final class WebServer: @unchecked Sendable {
    // Sendable: built on the control thread, then used on `loop`'s thread only.
    public struct Limits: Sendable {
        public var perClient = 16
        public var total = 256
        public var requestTimeout: Nanoseconds = 10_000_000_000
        public var idleTimeout: Nanoseconds = 60_000_000_000
        public var maxHead = 8 * 1024

        public init() {}
    }

    let loop: EventLoop
    let clock: any Clock
    let app: WebApp
    /// The child's page, when `child_listen` has addresses.
    let child: ChildApp?
    let tls: TLSServerContext
    let limits: Limits
    /// The HTTPS port the redirect sends browsers to.
    let httpsPort: UInt16
    private var listeners: [Listener] = []
    fileprivate var open: [Int32: WebConnection] = [:]
    fileprivate var perClient: [IPAddress: Int] = [:]

    public init(
        loop: EventLoop, clock: any Clock, app: WebApp, child: ChildApp? = nil, tls: TLSServerContext,
        httpsPort: UInt16, limits: Limits = Limits()
    ) {
        self.loop = loop
        self.clock = clock
        self.app = app
        self.child = child
        self.tls = tls
        self.httpsPort = httpsPort
        self.limits = limits
    }

    /// Binds every listener (on the loop's thread). Throws the first that cannot bind.
    public func start(
        https: [SocketAddress], redirect: [SocketAddress], child: [SocketAddress] = []
    ) throws(SystemError) -> [SocketAddress] {
        var bound: [SocketAddress] = []
        let roles: [([SocketAddress], WebConnection.Role)] = [(https, .page), (redirect, .redirect), (child, .child)]
        for (addresses, role) in roles where role != .child || self.child != nil {
            for address in addresses {
                let socket = try Socket.listen(on: address, backlog: 64)
                // Accepted sockets inherit it: a response's last TLS record goes out at
                // once, not after the client's delayed acknowledgement of the one before.
                try? socket.setNoDelay()
                let listener = Listener(socket: socket, server: self, role: role)
                try loop.register(socket.descriptor, interest: .read, handler: listener)
                listeners.append(listener)
                bound.append(socket.address ?? address)
            }
        }
        return bound
    }

    /// Closes the listeners and every connection (on the loop's thread).
    public func stop() {
        for listener in listeners {
            try? loop.deregister(listener.socket.descriptor)
            listener.socket.close()
        }
        listeners = []
        for connection in Array(open.values) { connection.close() }
    }

    public var openConnections: Int { open.count }

    fileprivate func accepted(_ socket: Socket, role: WebConnection.Role) {
        guard let client = socket.address.flatMap(Self.ipAddress) else {
            socket.close()
            return
        }
        guard open.count < limits.total, perClient[client, default: 0] < limits.perClient else {
            socket.close()
            return
        }
        let transport: WebConnection.Transport
        if role == .page {
            guard let session = try? TLSConnection(server: tls) else {
                socket.close()
                return
            }
            transport = .tls(session)
        } else {
            transport = .plain
        }
        let connection = WebConnection(socket: socket, client: client, transport: transport, role: role, server: self)
        do {
            try loop.register(socket.descriptor, interest: .read, handler: connection)
        } catch {
            socket.close()
            return
        }
        open[socket.descriptor] = connection
        perClient[client, default: 0] += 1
        connection.armTimer(limits.idleTimeout)
    }

    fileprivate func closed(_ connection: WebConnection, descriptor: Int32) {
        guard open.removeValue(forKey: descriptor) != nil else { return }
        let left = perClient[connection.client, default: 1] - 1
        perClient[connection.client] = left > 0 ? left : nil
    }

    /// The response of the plain listener: everything goes to the same path over HTTPS.
    fileprivate func redirect(_ head: RequestHead) -> WebResponse {
        guard let host = head.fields.first("Host"), app.hostAllowed(host) else {
            return .text(421, "This page answers only to the gateway's own names and addresses.\n")
        }
        var name = host
        if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
            name = String(name[...close])
        } else if let colon = name.lastIndex(of: ":"), name.firstIndex(of: ":") == colon {
            name = String(name[..<colon])
        }
        let port = httpsPort == 443 ? "" : ":\(httpsPort)"
        let path = head.target.hasPrefix("/") ? head.target : "/"
        return .redirect("https://\(name)\(port)\(path)", status: 301)
    }

    static func ipAddress(_ address: SocketAddress) -> IPAddress? {
        if let bits = address.ipv4Bits { return .v4(bits) }
        if let bits = address.ipv6Bits { return .v6(high: bits.high, low: bits.low) }
        return nil
    }
}

private final class Listener: Selectable {
    let socket: Socket
    unowned let server: WebServer
    let role: WebConnection.Role

    init(socket: Socket, server: WebServer, role: WebConnection.Role) {
        self.socket = socket
        self.server = server
        self.role = role
    }

    func readable() {
        // A bounded batch: a flood of connections does not hold the loop.
        for _ in 0..<64 {
            guard let accepted = try? socket.accept() else { return }
            server.accepted(accepted, role: role)
        }
    }

    func writable() {}
    func hangup() {}
}

/// One connection to the page: bytes in (through TLS on the HTTPS listener), one request
/// at a time, its response out, then the next request or the end.
final class WebConnection: Selectable, TimerTarget {
    enum Transport {
        case plain
        case tls(TLSConnection)
    }

    /// What the listener serves: the parent's page (over TLS), the redirect to it, or the
    /// child's page.
    enum Role {
        case page, redirect, child
    }

    let socket: Socket
    let client: IPAddress
    let transport: Transport
    let role: Role
    unowned let server: WebServer
    private var input: [UInt8] = []
    private var output: [UInt8] = []
    private var scanner: HeadScanner
    private var headLength: Int?
    private var bodyLength = 0
    private var closeAfterWrite = false
    private var timer: TimerHandle?
    private var closed = false
    private var requestStarted = false
    /// The peer shut down its side: no more requests will come.
    private var peerDone = false

    init(socket: Socket, client: IPAddress, transport: Transport, role: Role, server: WebServer) {
        self.socket = socket
        self.client = client
        self.transport = transport
        self.role = role
        self.server = server
        scanner = HeadScanner(limit: server.limits.maxHead)
    }

    func armTimer(_ delay: Nanoseconds) {
        if let timer { _ = server.loop.cancelTimer(timer) }
        timer = server.loop.scheduleTimer(at: server.clock.now() &+ delay, target: self)
    }

    func timerFired(tag: UInt64) {
        timer = nil
        // A request that did not arrive whole in time gets 408; an idle one just ends.
        if !input.isEmpty, output.isEmpty {
            respond(.text(408, "the request took too long\n"), keepAlive: false)
        } else {
            close()
        }
    }

    func readable() {
        guard !closed else { return }
        do {
            try receive()
        } catch {
            close()
            return
        }
        process()
        // The peer sent all it will: answer what is whole, then end; never poll its EOF again.
        if peerDone, !closed {
            closeAfterWrite = true
            if output.isEmpty { return close() }
            try? server.loop.setInterest(.write, for: socket.descriptor)
        }
    }

    func writable() {
        guard !closed else { return }
        flush()
    }

    func hangup() { close() }

    /// Moves what arrived into `input`; at most one request's worth is kept.
    private func receive() throws {
        let room = server.limits.maxHead + WebApp.maxBody + 4096
        switch transport {
        case .plain:
            var buffer = ByteBuffer(capacity: 4096)
            switch try socket.read(into: &buffer, maxBytes: 4096) {
            case .processed: buffer.withUnsafeReadableBytes { input.append(contentsOf: $0) }
            case .wouldBlock: return
            case .eof: peerDone = true
            }
        case .tls(let session):
            let received = try session.receiveCiphertext(from: socket)
            var buffer = ByteBuffer(capacity: 16_384)
            while input.count < room {
                let result = try session.read(into: &buffer)
                guard case .processed(let count) = result, count > 0 else {
                    if case .closed = result { throw WebConnectionEnd() }
                    break
                }
                buffer.withUnsafeReadableBytes { input.append(contentsOf: $0) }
                buffer.clear()
            }
            // Handshake records to send back.
            if session.pendingCiphertext > 0 { flush() }
            if case .eof = received { peerDone = true }
        }
        if input.count > room { throw WebConnectionEnd() }
    }

    private func process() {
        guard output.isEmpty, !closed, !input.isEmpty else { return }
        if headLength == nil {
            // The first byte of a request starts its clock; more bytes do not extend it.
            if !requestStarted {
                requestStarted = true
                armTimer(server.limits.requestTimeout)
            }
            do {
                var copy = scanner
                headLength = try input.withUnsafeBytes { bytes throws(HTTP1Error) in try copy.scan(bytes) }
                scanner = copy
            } catch {
                respond(.text(431, "request head too large\n"), keepAlive: false)
                return
            }
            guard let length = headLength else { return }
            headLength = length
            guard let head = try? RequestHead(Array(input[0..<length])) else {
                respond(.text(400, "bad request\n"), keepAlive: false)
                return
            }
            if head.fields.contains("Transfer-Encoding") {
                respond(.text(411, "send a Content-Length\n"), keepAlive: false)
                return
            }
            let declared = head.fields.first("Content-Length").map { Int($0.trimmingCharacters) ?? -1 } ?? 0
            guard declared >= 0 else {
                respond(.text(400, "bad Content-Length\n"), keepAlive: false)
                return
            }
            guard declared <= WebApp.maxBody else {
                respond(.text(413, "the body is over \(WebApp.maxBody) bytes\n"), keepAlive: false)
                return
            }
            bodyLength = declared
        }
        guard let length = headLength, input.count >= length + bodyLength else { return }
        guard let head = try? RequestHead(Array(input[0..<length])) else { return close() }
        let body = Array(input[length..<(length + bodyLength)])
        input.removeFirst(length + bodyLength)
        headLength = nil
        requestStarted = false
        scanner.reset()
        let response: WebResponse
        let request = WebRequest(head: head, body: body, client: client)
        switch role {
        case .redirect: response = server.redirect(head)
        case .page: response = server.app.respond(request)
        case .child: response = server.child?.respond(request) ?? .text(404, "no child's page here\n")
        }
        respond(response, keepAlive: head.keepAlive, headOnly: head.method == "HEAD")
    }

    private func respond(_ response: WebResponse, keepAlive: Bool, headOnly: Bool = false) {
        closeAfterWrite = closeAfterWrite || !keepAlive
        output = response.serialized(keepAlive: keepAlive && !closeAfterWrite, headOnly: headOnly)
        flush()
    }

    /// Writes what is waiting; when done, the next request (or the end).
    private func flush() {
        do {
            switch transport {
            case .plain:
                while !output.isEmpty {
                    let result = try output.withUnsafeBytes { try socket.write($0) }
                    guard case .processed(let count) = result, count > 0 else { break }
                    output.removeFirst(count)
                }
                if !output.isEmpty { return try server.loop.setInterest(.both, for: socket.descriptor) }
            case .tls(let session):
                while !output.isEmpty {
                    let result = try output.withUnsafeBytes { try session.write($0) }
                    if case .processed(let count) = result, count > 0 {
                        output.removeFirst(count)
                    }
                    guard try session.sendCiphertext(to: socket) else {
                        return try server.loop.setInterest(.both, for: socket.descriptor)
                    }
                    if case .processed(let count) = result, count > 0 { continue }
                    break
                }
                guard try session.sendCiphertext(to: socket) else {
                    return try server.loop.setInterest(.both, for: socket.descriptor)
                }
                if !output.isEmpty { return try server.loop.setInterest(.both, for: socket.descriptor) }
            }
            try server.loop.setInterest(peerDone ? .write : .read, for: socket.descriptor)
        } catch {
            return close()
        }
        guard output.isEmpty else { return }
        if closeAfterWrite { return close() }
        armTimer(server.limits.idleTimeout)
        // A pipelined request already read.
        if !input.isEmpty { process() }
    }

    func close() {
        guard !closed else { return }
        closed = true
        if let timer { _ = server.loop.cancelTimer(timer) }
        timer = nil
        if case .tls(let session) = transport {
            session.shutdown()
            _ = try? session.sendCiphertext(to: socket)
        }
        let descriptor = socket.descriptor
        try? server.loop.deregister(descriptor)
        server.closed(self, descriptor: descriptor)
        socket.close()
    }
}

private struct WebConnectionEnd: Error {}

extension String {
    fileprivate var trimmingCharacters: String {
        String(Substring(self).trimmingSpaces)
    }
}
