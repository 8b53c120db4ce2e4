import Foundation

/// unbound as a validating resolver on 127.0.0.1, UDP and TCP, that sends every query to
/// one server (`forward-zone` for the root) and validates what comes back from
/// `trustAnchor` (a `SignedZones` root's): the client of a home's Pi-hole or router that
/// validates, or a validating upstream. Extended DNS Errors on (`ede: yes`) and the reason
/// of each validation failure in its log (`val-log-level: 2`).
public final class ValidatingResolver: @unchecked Sendable {
    // Sendable: immutable after init; the server process guards its own state.
    public static let path = "/usr/sbin/unbound"
    public let port: UInt16
    public let server: SpawnedServer
    private let directory: ScratchDirectory

    /// `127.0.0.1:PORT`, as `--upstream` takes it.
    public var spec: String { "127.0.0.1:\(port)" }

    /// - Parameters:
    ///   - forwarder: the one server asked, on 127.0.0.1.
    ///   - trustAnchor: DS records of the root, each a `trust-anchor` line.
    public init(forwardingTo forwarder: UInt16, trustAnchor: [String]) throws {
        directory = try ScratchDirectory("pg-validator")
        let directory = self.directory
        let anchors = trustAnchor.map { "    trust-anchor: \"\($0)\"" }.joined(separator: "\n")
        (server, port) = try SpawnedServer.onFreePort { port in
            let config = """
                server:
                    interface: 127.0.0.1@\(port)
                    port: \(port)
                    do-daemonize: no
                    use-syslog: no
                    logfile: ""
                    chroot: ""
                    username: ""
                    pidfile: ""
                    directory: "\(directory.path)"
                    do-ip6: no
                    num-threads: 1
                    so-reuseport: no
                    outgoing-range: 64
                    verbosity: 1
                    val-log-level: 2
                    ede: yes
                    access-control: 127.0.0.0/8 allow
                    do-not-query-localhost: no
                    module-config: "validator iterator"
                \(anchors)
                forward-zone:
                    name: "."
                    forward-addr: 127.0.0.1@\(forwarder)
                remote-control:
                    control-enable: no
                """
            let file = try directory.write("unbound-\(port).conf", config)
            return try SpawnedServer(
                Self.path, ["-d", "-c", file], logFile: directory.path("unbound-\(port).log"), readyPort: port)
        }
    }

    deinit { server.kill() }

    public var log: String { server.log }

    public func dig(_ name: String, _ type: String = "A", _ options: [String] = []) throws -> DigAnswer {
        try Dig.query(name, type, port: port, options: options)
    }
}
