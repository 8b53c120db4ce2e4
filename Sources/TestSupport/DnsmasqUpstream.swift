import Foundation

/// dnsmasq (dnsmasq-base) as a real upstream on 127.0.0.1, UDP and TCP, answering only
/// from its command line: `--address=/name/IP`, `--host-record=name,IP`,
/// `--cname=alias,target` (targets must be its own host records), `--txt-record=…`. It
/// never reads /etc/resolv.conf, /etc/hosts or a configuration file and has no server to
/// forward to (names it does not know are REFUSED), so nothing leaves the machine. Every
/// query that reaches it is logged (`--log-queries`), which `queries` reads back.
public final class DnsmasqUpstream: @unchecked Sendable {
    // Sendable: immutable after init; the server process guards its own state.
    public static let path = "/usr/sbin/dnsmasq"
    public let port: UInt16
    public let server: SpawnedServer
    private let directory: ScratchDirectory

    /// `127.0.0.1:PORT`, as `--upstream` takes it.
    public var spec: String { "127.0.0.1:\(port)" }

    /// - Parameters:
    ///   - records: dnsmasq options that give answers (see above).
    ///   - localTTL: the TTL of those answers (`--local-ttl`; dnsmasq's own default is 0,
    ///     which no cache keeps).
    public init(_ records: [String], localTTL: Int = 300) throws {
        directory = try ScratchDirectory("pg-dnsmasq")
        let directory = self.directory
        (server, port) = try SpawnedServer.onFreePort { port in
            try SpawnedServer(
                Self.path,
                [
                    "--keep-in-foreground", "--no-resolv", "--no-hosts", "--no-poll", "--conf-file=/dev/null",
                    "--pid-file=", "--bind-interfaces", "--listen-address=127.0.0.1", "--port=\(port)",
                    "--log-queries", "--log-facility=-", "--local-ttl=\(localTTL)",
                ] + records,
                logFile: directory.path("dnsmasq.log"), readyPort: port)
        }
    }

    deinit { server.kill() }

    /// Its log so far.
    public var log: String { server.log }

    /// One query as dnsmasq logged it: `dnsmasq[PID]: query[TYPE] NAME from 127.0.0.1`.
    public struct LoggedQuery: Equatable, Sendable, CustomStringConvertible {
        public let type: String
        public let name: String
        /// The process that answered it: the main one for UDP, a forked child per TCP connection.
        public let pid: Int32
        public var description: String { "\(type) \(name) (pid \(pid))" }
    }

    /// Every query that reached it, in order.
    public var queries: [LoggedQuery] {
        log.split(separator: "\n").compactMap { line -> LoggedQuery? in
            guard let open = line.firstIndex(of: "["), let close = line.firstIndex(of: "]"), open < close,
                let pid = Int32(line[line.index(after: open)..<close]),
                let marker = line.range(of: ": query[")
            else { return nil }
            let rest = line[marker.upperBound...]
            guard let end = rest.firstIndex(of: "]") else { return nil }
            let words = rest[rest.index(after: end)...].split(separator: " ")
            guard let name = words.first else { return nil }
            return LoggedQuery(type: String(rest[..<end]), name: String(name), pid: pid)
        }
    }

    /// The queries for `name` (any letter case), of `type` when given.
    public func queries(for name: String, type: String? = nil) -> [LoggedQuery] {
        queries.filter { $0.name.lowercased() == name.lowercased() && (type == nil || $0.type == type) }
    }

    /// The main process's pid (the one that logs UDP queries; TCP is served by children).
    public var mainPID: Int32 { server.pid }

    /// Waits (at most `timeout`) until `count` queries for `name` have been logged, and
    /// returns them; dnsmasq writes its log a moment after answering.
    @discardableResult
    public func waitForQueries(
        _ name: String, type: String? = nil, count: Int = 1, timeout: TimeInterval = 2
    )
        -> [LoggedQuery]
    {
        _ = waitUntil(timeout: .seconds(timeout), interval: 5_000_000) { queries(for: name, type: type).count >= count }
        return queries(for: name, type: type)
    }

    /// Every query it has logged, complete — for asserting that something did NOT reach
    /// it, without sleeping: dnsmasq writes its log a moment after answering, but in the
    /// order queries came, so one more query of ours, sent straight to it after the test's
    /// own have been answered, is logged after all of theirs. Waits for that one (left out
    /// of the result).
    public func settledQueries() throws -> [LoggedQuery] {
        let marker = "settle-\(UUID().uuidString.prefix(8).lowercased()).invalid"
        _ = try Dig.query(marker, port: port)
        guard waitUntil(interval: 5_000_000, { !queries(for: marker).isEmpty }) else {
            throw SpawnedServerError(message: "dnsmasq never logged \(marker):\n\(log)")
        }
        return queries.filter { $0.name != marker }
    }

    /// `settledQueries()` for `name` (any letter case), of `type` when given.
    public func settledQueries(for name: String, type: String? = nil) throws -> [LoggedQuery] {
        try settledQueries().filter { $0.name.lowercased() == name.lowercased() && (type == nil || $0.type == type) }
    }

    /// SIGKILL (with its TCP children), as a crashed upstream.
    public func kill() { server.kill() }
}
