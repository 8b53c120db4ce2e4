import Glibc
import SystemIO
import TLS
import TestSupport
import Testing

/// The generated certificate as the real `openssl x509` reads it, its arguments checked
/// before OpenSSL sees them, and the files as `write` leaves them.
@Suite(.blocking) struct SelfSignedCertificateTests {
    private func text(of pair: GeneratedPair) throws -> String {
        let output = try Program.run("/usr/bin/openssl", ["x509", "-noout", "-text", "-in", pair.certificateFile])
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdout
    }

    @Test func opensslReadsEveryFieldAsSpecified() throws {
        let issued = WallTime(unixSeconds: 1_800_000_000)  // 2027-01-15 08:00:00 UTC
        let text = try text(of: GeneratedPair(dnsNames: ["gate.test", "Phosra-Gate.LAN"], now: issued))
        for expected in [
            "Version: 3 (0x2)",
            "Signature Algorithm: ecdsa-with-SHA256",
            "Issuer: CN = Phosra Gate test",
            "Subject: CN = Phosra Gate test",
            "Not Before: Jan 14 08:00:00 2027 GMT",  // a day early, for clocks a little behind
            "Not After : Feb 14 08:00:00 2027 GMT",  // 30 days after issue
            "Public Key Algorithm: id-ecPublicKey",
            "Public-Key: (256 bit)",
            "ASN1 OID: prime256v1",
            "X509v3 Basic Constraints: critical\n                CA:FALSE",
            "X509v3 Key Usage: critical\n                Digital Signature\n",
            "X509v3 Extended Key Usage: \n                TLS Web Server Authentication\n",
            "X509v3 Subject Key Identifier",
            // Names lowercased; IPv6 as OpenSSL 3.0 prints it, every group written out.
            "DNS:gate.test, DNS:phosra-gate.lan, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1\n",
        ] {
            #expect(text.contains(expected), "\(expected) in \(text)")
        }
    }

    @Test func theSerialIsSixteenRandomBytesAndPositive() throws {
        let first = try serial(of: GeneratedPair())
        let second = try serial(of: GeneratedPair())
        #expect(first.count == 16 && second.count == 16, "\(first) \(second)")
        #expect(first[0] & 0x80 == 0 && first[0] != 0)
        #expect(first != second)
    }

    /// The serial's bytes, from `openssl x509 -serial` ("serial=4A1B…").
    private func serial(of pair: GeneratedPair) throws -> [UInt8] {
        let output = try Program.run("/usr/bin/openssl", ["x509", "-noout", "-serial", "-in", pair.certificateFile])
        let hex = Array(output.stdout.split(separator: "=").last?.filter(\.isHexDigit) ?? "")
        return stride(from: 0, to: hex.count - 1, by: 2).compactMap { UInt8(String(hex[$0...$0 + 1]), radix: 16) }
    }

    @Test func eachCallMakesANewKey() throws {
        let first = try GeneratedPair()
        let second = try GeneratedPair()
        #expect(try Files.read(first.keyFile) != Files.read(second.keyFile))
        #expect(try first.serverContext().fingerprintSHA256 != second.serverContext().fingerprintSHA256)
    }

    @Test func theKeyIsUnencryptedPKCS8() throws {
        let pair = try GeneratedPair()
        let key = try Files.read(pair.keyFile)
        #expect(key.starts(with: Array("-----BEGIN PRIVATE KEY-----\n".utf8)))
    }

    @Test(arguments: [
        ("", ["gate.test"], [], 30, "the common name must have 1 to 64 characters"),
        (String(repeating: "x", count: 65), ["gate.test"], [], 30, "the common name must have 1 to 64 characters"),
        ("Gate", [], [], 30, "no DNS name or IP address to certify"),
        ("Gate", ["gate.test,DNS:bank.example"], [], 30, "DNS name \"gate.test,DNS:bank.example\" is not a host name"),
        ("Gate", ["*.gate.test"], [], 30, "DNS name \"*.gate.test\" is not a host name"),
        ("Gate", ["gate..test"], [], 30, "DNS name \"gate..test\" is not a host name"),
        ("Gate", ["-gate.test"], [], 30, "DNS name \"-gate.test\" is not a host name"),
        (
            "Gate", [String(repeating: "a", count: 64)], [], 30,
            "DNS name \"\(String(repeating: "a", count: 64))\" is not a host name"
        ),
        ("Gate", [], ["300.1.1.1"], 30, "\"300.1.1.1\" is not an IP address"),
        ("Gate", [], ["fe80::1%eth0"], 30, "\"fe80::1%eth0\" is not an IP address"),
        ("Gate", ["gate.test"], [], 0, "valid days must be 1 to 36500, not 0"),
        ("Gate", ["gate.test"], [], 36_501, "valid days must be 1 to 36500, not 36501"),
    ])
    func badArgumentsAreNamed(name: String, hosts: [String], addresses: [String], days: Int, reason: String) {
        #expect(throws: TLSError.configuration("self-signed certificate: \(reason)")) {
            try SelfSignedCertificate.make(commonName: name, dnsNames: hosts, ipAddresses: addresses, validDays: days)
        }
    }

    @Test func theKeyFileIsWrittenWithMode0600AndTheCertificate0644() throws {
        let pair = try GeneratedPair()
        #expect(try Files.status(pair.keyFile).mode & 0o777 == 0o600)
        #expect(try Files.status(pair.certificateFile).mode & 0o777 == 0o644)
        #expect(try Files.list(pair.directory.path) == ["gate.key", "gate.pem"])  // no temporary file left
    }

    @Test func rewritingReplacesBothFilesAndKeepsTheKeyPrivate() throws {
        let pair = try GeneratedPair()
        let before = try pair.serverContext().fingerprintSHA256
        let next = try SelfSignedCertificate.make(
            commonName: "Phosra Gate test", dnsNames: [GeneratedPair.name], ipAddresses: [], validDays: 30)
        try SelfSignedCertificate.write(
            certificatePEM: next.certificatePEM, keyPEM: next.keyPEM, certificateFile: pair.certificateFile,
            keyFile: pair.keyFile)
        #expect(try pair.serverContext().fingerprintSHA256 != before)
        #expect(try Files.status(pair.keyFile).mode & 0o777 == 0o600)
    }

    @Test func aDirectoryThatIsNotThereIsAnIOErrorNamingTheFile() throws {
        let pair = try GeneratedPair()
        let keyFile = pair.directory.path("missing/gate.key")
        #expect {
            try SelfSignedCertificate.write(
                certificatePEM: pair.certificatePEM, keyPEM: [],
                certificateFile: pair.directory.path("missing/gate.pem"),
                keyFile: keyFile)
        } throws: { error in
            guard case .credentialFile(keyFile, .io(let cause)) = error as? TLSError else { return false }
            return cause.call == "open" && cause.errno == ENOENT
        }
    }
}
