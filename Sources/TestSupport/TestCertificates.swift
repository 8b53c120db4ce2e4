import Foundation

/// A throw-away PKI made with the `openssl` CLI in a scratch directory: a test CA, a
/// server certificate it signed for `dot.test` and 127.0.0.1, and a second CA that signed
/// nothing (for "untrusted CA"). Removed with its directory when released.
public final class TestCertificates: @unchecked Sendable {
    // Sendable: immutable after init (paths of files written once).
    public static let serverName = "dot.test"
    private let directory: ScratchDirectory

    public var caFile: String { directory.path("ca.pem") }
    public var otherCAFile: String { directory.path("other-ca.pem") }
    public var serverCertificate: String { directory.path("server.pem") }
    public var serverKey: String { directory.path("server.key") }

    public init() throws {
        directory = try ScratchDirectory("pg-pki")
        let key = "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256"
        let ca =
            "-sha256 -days 2 -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign"
        let script = """
            set -e; cd '\(directory.path)'
            \(key) -out ca.key
            openssl req -x509 -new -key ca.key -subj '/CN=phosra-gate test CA' \(ca) -out ca.pem
            \(key) -out other-ca.key
            openssl req -x509 -new -key other-ca.key -subj '/CN=some other CA' \(ca) -out other-ca.pem
            \(key) -out server.key
            openssl req -new -key server.key -subj '/CN=\(Self.serverName)' -out server.csr
            printf 'subjectAltName=DNS:\(Self.serverName),IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > server.ext
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -sha256 \\
                -extfile server.ext -out server.pem
            chmod 644 server.key
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SpawnedServerError(message: "openssl failed: \(text)")
        }
    }
}

/// unbound as a DNS-over-TLS server on 127.0.0.1 (TCP only) with the server certificate of
/// `TestCertificates`: `*.example.test` → `answer` from local data, everything else
/// refused (no recursion, no root hints, no trust anchors: nothing leaves the machine).
public final class UnboundDoT: @unchecked Sendable {
    // Sendable: immutable after init; the server process guards its own state.
    public static let path = "/usr/sbin/unbound"
    public static let answer = "192.0.2.53"
    public let port: UInt16
    public let certificates: TestCertificates
    public let server: SpawnedServer
    private let directory: ScratchDirectory

    /// `tls://127.0.0.1:PORT#name`, as `--upstream` takes it.
    public func spec(name: String = TestCertificates.serverName) -> String { "tls://127.0.0.1:\(port)#\(name)" }

    /// - Parameter idleTimeoutMilliseconds: how soon unbound closes an idle TLS connection
    ///   (30 s is unbound's own default).
    public init(certificates: TestCertificates? = nil, idleTimeoutMilliseconds: Int = 30_000) throws {
        self.certificates = try certificates ?? TestCertificates()
        directory = try ScratchDirectory("pg-unbound")
        let directory = self.directory
        let certificates = self.certificates
        (server, port) = try SpawnedServer.onFreePort { port in
            let config = """
                server:
                    interface: 127.0.0.1@\(port)
                    port: \(port)
                    tls-port: \(port)
                    tls-service-key: "\(certificates.serverKey)"
                    tls-service-pem: "\(certificates.serverCertificate)"
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
                    log-queries: yes
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
            let file = try directory.write("unbound-\(port).conf", config)
            return try SpawnedServer(
                Self.path, ["-d", "-c", file], logFile: directory.path("unbound-\(port).log"),
                readyPort: port)
        }
    }

    deinit { server.kill() }

    public var log: String { server.log }
}
