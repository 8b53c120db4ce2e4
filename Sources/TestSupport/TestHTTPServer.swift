import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small HTTP/1.1 server on 127.0.0.1 for tests, plain or TLS: a listener thread and
/// one thread per connection (blocking sockets), keep-alive, `Expect: 100-continue`, an
/// idle timeout. Each request goes to `handler`, whose `Reply` can be a proper response,
/// raw bytes (for malformed replies), a dropped connection or silence. `stop()` closes
/// everything; `start()` listens again on the same port.
public final class TestHTTPServer: @unchecked Sendable {
    // Sendable: `core` and `host` are immutable; the core's shared state is behind its lock.
    /// One request as received.
    public struct Request: Sendable {
        public let method: String
        /// The request target as sent (path and query).
        public let target: String
        public let version: String
        public let headers: [(String, String)]
        public let body: [UInt8]
        /// 1 for the first connection the server accepted since it was made.
        public let connection: Int
        /// 1 for the first request on its connection.
        public let indexOnConnection: Int

        /// The target without its query.
        public var path: String { String(target.prefix { $0 != "?" }) }
        /// The raw query (after "?"), nil when there is none.
        public var query: String? { target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } }

        /// The first value of header `name`, ignoring case.
        public func header(_ name: String) -> String? {
            headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }

        /// Query items, percent-decoded ("+" stays "+", as in a path).
        public var queryItems: [(String, String)] {
            guard let query, !query.isEmpty else { return [] }
            return query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
                let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
                return (name, value)
            }
        }
    }

    /// How a response body is delimited.
    public enum Framing: Sendable {
        /// What Go's net/http does: no body for 1xx/204/304, `Content-Length` up to 2048
        /// bytes, chunked above.
        case automatic
        case contentLength
        case chunked(chunkSize: Int)
        /// Neither header; the connection is closed after the body.
        case closeDelimited
        /// No body and no length header at all (as for 304).
        case none
    }

    public struct Response: Sendable {
        public var status: Int
        public var reason: String?
        public var headers: [(String, String)]
        public var body: [UInt8]
        public var framing: Framing

        public init(
            status: Int, reason: String? = nil, headers: [(String, String)] = [], body: [UInt8] = [],
            framing: Framing = .automatic
        ) {
            self.status = status
            self.reason = reason
            self.headers = headers
            self.body = body
            self.framing = framing
        }

        public init(status: Int, headers: [(String, String)] = [], text: String, framing: Framing = .automatic) {
            self.init(status: status, headers: headers, body: Array(text.utf8), framing: framing)
        }
    }

    public enum Reply: Sendable {
        case respond(Response)
        /// Exactly these bytes, then the connection stays open or is closed.
        case raw([UInt8], close: Bool)
        /// These byte runs with a pause between them (a response split across TCP writes).
        case rawParts([[UInt8]], pause: Duration, close: Bool)
        /// The connection is closed without a reply (TLS: without close_notify).
        case drop
        /// No reply ever: the connection stays open until the client closes it, the idle
        /// timeout passes or the server stops.
        case hang
    }

    public typealias Handler = @Sendable (Request) -> Reply

    /// The threads hold the core, not this object, so releasing the server stops them.
    let core: Core

    /// Starts listening on `host`:`port` (an IPv4 address, 127.0.0.1 unless a test made its
    /// own namespace; port 0: the OS picks, read `port`).
    public init(
        host: String = "127.0.0.1", port: UInt16 = 0, tls: TestTLSServerContext? = nil,
        idleTimeout: Duration = .seconds(15), handler: @escaping Handler
    ) throws {
        let listener = try Self.listen(port: port, host: host)
        self.host = host
        core = Core(port: listener.port, tls: tls, idleTimeout: idleTimeout, handler: handler)
        core.startAccepting(listener.descriptor)
    }

    deinit { core.stop() }

    public var port: UInt16 { core.port }
    public let host: String
    /// `http://HOST:PORT` or `https://HOST:PORT`.
    public var origin: String { "\(core.tls == nil ? "http" : "https")://\(host):\(port)" }

    public var isRunning: Bool { core.isRunning }
    /// Connections accepted since the server was made (over restarts).
    public var connectionsAccepted: Int { core.state.locked { $0.accepted } }
    /// Connections open right now.
    public var openConnections: Int { core.state.locked { $0.open.count } }

    /// Stops listening, closes every connection (a handler still running finishes first)
    /// and waits for all threads. Idempotent.
    public func stop() { core.stop() }

    /// Listens again on the same port after `stop()`.
    public func start() throws {
        guard !isRunning else { return }
        let listener = try Self.listen(port: port, host: host)
        core.startAccepting(listener.descriptor)
    }

    /// A listening TCP socket on `host`:`port` (0: a free port) and the port it got; the
    /// caller closes it.
    public static func listen(port: UInt16, host: String) throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SpawnedServerError(message: "socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in.loopback(port)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(descriptor)
            throw SpawnedServerError(message: "test HTTP server: \(host) is not an IPv4 address")
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(descriptor, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw SpawnedServerError(message: "test HTTP server: cannot listen on \(host):\(port): \(reason)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }
}
