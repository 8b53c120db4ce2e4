import Glibc
import SystemIO

/// A throw-away PKI made with the `openssl` CLI in a fresh temporary directory: a test CA,
/// a server certificate it signed for `dot.test` and 127.0.0.1, and a second CA that signed nothing.
/// Removed with everything in it when released.
final class TestPKI: Sendable {
    let directory: String
    var caFile: String { directory + "/ca.pem" }
    var otherCAFile: String { directory + "/other-ca.pem" }
    var serverCertificate: String { directory + "/server.pem" }
    var serverKey: String { directory + "/server.key" }

    static let serverName = "dot.test"

    init() throws {
        var template = Array("/tmp/pg-dot-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", errno: errno) }
        directory = String(cString: made)
        let key = "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256"
        let ca = "-sha256 -days 2 -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign"
        let script = """
            set -e; cd '\(directory)'
            \(key) -out ca.key
            openssl req -x509 -new -key ca.key -subj '/CN=phosra-gate test CA' \(ca) -out ca.pem
            \(key) -out other-ca.key
            openssl req -x509 -new -key other-ca.key -subj '/CN=some other CA' \(ca) -out other-ca.pem
            \(key) -out server.key
            openssl req -new -key server.key -subj '/CN=\(Self.serverName)' -out server.csr
            printf 'subjectAltName=DNS:\(Self.serverName),IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > server.ext
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -sha256 \\
                -extfile server.ext -out server.pem
            """
        let result = try ChildProcess.run("/bin/sh", ["-c", "(\(script)) 2>&1"])
        guard result.status == 0 else {
            removeDirectory()
            throw PKIError(output: result.text)
        }
    }

    deinit { removeDirectory() }

    private func removeDirectory() {
        for name in (try? Files.list(directory)) ?? [] { unlink(directory + "/" + name) }
        rmdir(directory)
    }

    struct PKIError: Error, CustomStringConvertible {
        let output: String
        var description: String { "openssl failed: \(output)" }
    }
}
