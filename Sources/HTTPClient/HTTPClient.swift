import EventLoop
import Glibc
import Locks
import Synchronization
import SystemIO
import TLS

/// A small blocking HTTP/1.1 client (RFC 9112) over TCP or the project's TLS, for the sync
/// thread: `send` returns when the response is complete, or throws once `requestTimeout`
/// has passed — resolving (getaddrinfo cannot be interrupted), connecting, the TLS
/// handshake (both also within `connectTimeout`), writing and reading all count.
///
/// TLS verification is always on: the chain against the context's trust store, and the
/// URL's host against the certificate (SNI for names; IP literals against its addresses).
///
/// Connections are kept alive, one idle connection per (scheme, host, port), for at most
/// `idleTimeout`. A kept connection is checked before use (a FIN or stray bytes retire it);
/// if it still turns out dead (closed or reset before any response byte), the request is
/// sent once more on a new connection — idempotent methods always, others only when the
/// failure came while writing (RFC 9110 §9.2.2), so a POST whose reply was lost is never
/// sent twice by the client.
///
/// Threading: meant for one thread; concurrent `send`s are safe (each uses its own
/// connection). Nothing is logged; no error carries a request header's value.
public final class HTTPClient: @unchecked Sendable {
    public let connectTimeout: Duration
    public let requestTimeout: Duration
    public let maxResponseBytes: Int
    public let userAgent: String
    public let idleTimeout: Duration
    /// Deadlines and the age of kept connections (monotonic only).
    let clock: any Clock
    private let resolver: HostResolver
    private let context: Lock<TLSContext?>
    /// The kept connections (`HTTPClient+Pool.swift`).
    let idle = Lock<[PoolKey: Connection]>([:])
    private let opened = Atomic<Int>(0)

    /// - Parameters:
    ///   - tls: the trust store for https (e.g. `TLSContext(caFile:)`); nil means the
    ///     system store, loaded at the first https request.
    ///   - userAgent: sent unless a request carries its own `User-Agent`.
    ///   - resolver: `.system` (getaddrinfo), or a fixed table for tests.
    ///   - clock: what deadlines and the idle timeout are measured on: the daemon's clock.
    public init(
        tls: TLSContext? = nil, connectTimeout: Duration = .seconds(15), requestTimeout: Duration = .seconds(30),
        maxResponseBytes: Int = 4 << 20, userAgent: String, idleTimeout: Duration = .seconds(30),
        resolver: HostResolver = .system, clock: any Clock
    ) {
        context = Lock(tls)
        self.clock = clock
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maxResponseBytes = maxResponseBytes
        self.userAgent = userAgent
        self.idleTimeout = idleTimeout
        self.resolver = resolver
    }

    deinit { closeIdleConnections() }

    /// How many connections this client has opened (TCP connected and, for https,
    /// handshaken). For tests of keep-alive.
    public var connectionsOpened: Int { opened.load(ordering: .relaxed) }

    /// Closes the kept connections (e.g. before a long sleep, or on shutdown).
    public func closeIdleConnections() {
        let connections = idle.withLock { pool in
            defer { pool.removeAll() }
            return Array(pool.values)
        }
        for connection in connections { connection.transport.close() }
    }

    /// Sends `request` and reads the whole response. Any status is a response (a 500 is
    /// not an error here); only a missing or unreadable response throws.
    public func send(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        let deadline = Deadline.after(requestTimeout, clock: clock)
        let message = try RequestWriter.serialize(request, userAgent: userAgent)
        let key = PoolKey(request.url)
        if let kept = takeIdle(key),
            case .response(let response) = try exchange(message, request, on: kept, until: deadline)
        {
            return response
        }
        let connection = try open(request.url, until: deadline)
        guard case .response(let response) = try exchange(message, request, on: connection, until: deadline) else {
            throw .closed  // not reached: only a reused connection is reported stale
        }
        return response
    }

    private enum Outcome {
        case response(HTTPResponse)
        /// A kept connection was dead; the request may be sent again on a new one.
        case stale
    }

    /// Writes the request and reads its response on `connection`, which is kept afterwards
    /// when the response allows it and closed otherwise.
    private func exchange(
        _ message: [UInt8], _ request: HTTPRequest, on connection: Connection,
        until deadline: Deadline
    ) throws(HTTPError) -> Outcome {
        var keep = false
        defer {
            if keep { putIdle(connection) } else { connection.transport.close() }
        }
        do {
            try connection.transport.write(message, until: deadline)
        } catch {
            if connection.reused && Self.isDisconnect(error) { return .stale }
            throw error
        }
        var reader = ResponseReader(method: request.method, maxBodyBytes: maxResponseBytes)
        while true {
            if let response = try reader.read(&connection.buffer) {
                keep = reader.allowsReuse && connection.buffer.readableBytes == 0
                connection.buffer.clear()
                return .response(response)
            }
            let outcome: Transport.ReadOutcome
            let untouched = !reader.hasStarted && connection.buffer.readableBytes == 0
            let retryable = connection.reused && untouched && request.isIdempotent
            do {
                outcome = try connection.transport.read(into: &connection.buffer, until: deadline)
            } catch {
                if retryable && Self.isDisconnect(error) { return .stale }
                throw error
            }
            if case .endOfStream(let clean) = outcome {
                if retryable { return .stale }
                return .response(try reader.finish(clean: clean))
            }
        }
    }

    /// Errors that mean the peer went away (rather than timing out or misbehaving).
    private static func isDisconnect(_ error: HTTPError) -> Bool {
        switch error {
        case .closed, .tls(.peerClosed): true
        case .io(let system): [ECONNRESET, EPIPE, ECONNABORTED].contains(system.errno)
        default: false
        }
    }

    /// Resolves, connects and (for https) handshakes, within `connectTimeout` and `deadline`.
    private func open(_ url: HTTPURL, until deadline: Deadline) throws(HTTPError) -> Connection {
        let connectDeadline = min(deadline, Deadline.after(connectTimeout, clock: clock))
        let addresses = try resolver.addresses(for: url)
        let socket = try Transport.connect(to: addresses, deadline: connectDeadline)
        var session: TLSConnection?
        if url.scheme == .https {
            do {
                session = try TLSConnection(context: try tlsContext(), serverName: url.host)
            } catch {
                socket.close()
                throw .tls(error)
            }
        }
        let transport = Transport(socket: socket, tls: session)
        do {
            try transport.handshake(until: connectDeadline)
        } catch {
            transport.close()
            throw error
        }
        opened.add(1, ordering: .relaxed)
        return Connection(key: PoolKey(url), transport: transport)
    }

    private func tlsContext() throws(TLSError) -> TLSContext {
        try context.withLock { (context: inout TLSContext?) throws(TLSError) -> TLSContext in
            if let context { return context }
            let made = try TLSContext()
            context = made
            return made
        }
    }
}
