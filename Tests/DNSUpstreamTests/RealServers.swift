import SystemIO

/// dnsmasq as an upstream on 127.0.0.1: answers `*.example.test` with 192.0.2.1 over UDP
/// and TCP and refuses everything else. It never reads /etc/resolv.conf, /etc/hosts or a
/// configuration file and has no server to forward to, so nothing leaves the machine.
final class Dnsmasq: Sendable {
    static let path = "/usr/sbin/dnsmasq"
    static let answer = "192.0.2.1"
    let port: UInt16
    private let directory: TemporaryDirectory
    private let process: ServerProcess

    init() throws {
        directory = try TemporaryDirectory()
        port = try freePort()
        process = try ServerProcess(
            Self.path,
            [
                "--keep-in-foreground", "--no-resolv", "--no-hosts", "--no-poll", "--conf-file=/dev/null",
                "--pid-file=", "--bind-interfaces", "--listen-address=127.0.0.1", "--port=\(port)",
                "--address=/example.test/\(Self.answer)", "--log-facility=-",
            ],
            logFile: directory.path + "/dnsmasq.log", readyPort: port)
    }
}

/// unbound as a DNS-over-TLS server on 127.0.0.1 with a certificate for `dot.test` from
/// `TestPKI`: `*.example.test` → 192.0.2.53 from local data, everything else refused (no
/// recursion, no root hints, no trust anchors: nothing leaves the machine).
final class Unbound: Sendable {
    static let path = "/usr/sbin/unbound"
    static let answer = "192.0.2.53"
    let port: UInt16
    let pki: TestPKI
    private let directory: TemporaryDirectory
    private let process: ServerProcess

    /// - Parameter idleTimeoutMilliseconds: how soon unbound closes an idle TLS connection.
    init(idleTimeoutMilliseconds: Int = 30_000) throws {
        pki = try TestPKI()
        directory = try TemporaryDirectory()
        port = try freePort()
        let config = """
            server:
                interface: 127.0.0.1@\(port)
                port: \(port)
                tls-port: \(port)
                tls-service-key: "\(pki.serverKey)"
                tls-service-pem: "\(pki.serverCertificate)"
                do-daemonize: no
                use-syslog: no
                logfile: ""
                chroot: ""
                username: ""
                pidfile: ""
                directory: "\(directory.path)"
                do-ip6: no
                do-udp: no
                num-threads: 1
                so-reuseport: no
                verbosity: 1
                incoming-num-tcp: 64
                tcp-idle-timeout: \(idleTimeoutMilliseconds)
                access-control: 127.0.0.0/8 allow
                module-config: "iterator"
                local-zone: "example.test." redirect
                local-data: "example.test. 300 IN A \(Self.answer)"
                local-zone: "." refuse
            remote-control:
                control-enable: no
            """
        let configFile = directory.path + "/unbound.conf"
        try Files.writeAtomically(configFile, Array(config.utf8))
        process = try ServerProcess(
            Self.path, ["-d", "-c", configFile], logFile: directory.path + "/unbound.log", readyPort: port)
    }
}
