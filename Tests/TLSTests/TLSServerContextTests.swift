import Glibc
import SystemIO
import TLS
import TestSupport
import Testing

/// Loading a server's certificate and key: what it reports of the certificate, a chain
/// from a CA, and each bad file as the typed error that names it.
@Suite(.blocking) struct TLSServerContextTests {
    let pair: GeneratedPair

    init() throws { pair = try GeneratedPair() }

    @Test func theFingerprintIsOpenSSLsSHA256Fingerprint() throws {
        let output = try Program.run(
            "/usr/bin/openssl", ["x509", "-noout", "-fingerprint", "-sha256", "-in", pair.certificateFile])
        #expect(output.status == 0, "\(output.stderr)")
        // "sha256 Fingerprint=AB:CD:…" (older versions spell it "SHA256").
        let printed = output.stdout.split(separator: "=").last.map { String($0.filter { !$0.isWhitespace }) }
        let fingerprint = try pair.serverContext().fingerprintSHA256
        #expect(fingerprint == printed)
        #expect(fingerprint.count == 32 * 3 - 1)
        #expect(fingerprint.allSatisfy { "0123456789ABCDEF:".contains($0) })
    }

    @Test func notAfterIsTheEndOfTheValidity() throws {
        let issued = WallTime(unixSeconds: 1_800_000_000)  // 2027-01-15 08:00:00 UTC
        let pair = try GeneratedPair(now: issued)
        #expect(try pair.serverContext().notAfter == 1_800_000_000 + 30 * 86_400)
    }

    /// `status` reads the certificate without its key (which only root may read): the same
    /// fingerprint and end as the context `run` serves with.
    @Test func theSummaryOfTheFileAloneIsTheContexts() throws {
        let summary = try CertificateSummary(file: pair.certificateFile)
        let context = try pair.serverContext()
        #expect(summary.fingerprintSHA256 == context.fingerprintSHA256 && summary.notAfter == context.notAfter)
        #expect(throws: TLSError.credentialFile(path: pair.keyFile, problem: .noCertificate)) {
            try CertificateSummary(file: pair.keyFile)
        }
    }

    @Test func aChainFromACAIsServedAndVerifiesAgainstThatCA() throws {
        let pki = try TestPKI()
        let chain = pair.directory.path("chain.pem")
        let bytes = try Files.read(pki.serverCertificate) + Files.read(pki.caFile)
        try Files.writeAtomically(chain, bytes)
        let server = try TLSConnection(server: TLSServerContext(certificateFile: chain, keyFile: pki.serverKey))
        let client = try TLSConnection(context: TLSContext(caFile: pki.caFile), serverName: TestPKI.serverName)
        #expect(try MemoryLink(client: client, server: server).handshake())
    }

    @Test func aMissingFileIsNamedWithErrno() throws {
        let missing = pair.directory.path("missing.pem")
        let noFile = TLSError.CredentialProblem.io(SystemError("open", errno: ENOENT, subject: missing))
        #expect(throws: TLSError.credentialFile(path: missing, problem: noFile)) {
            try TLSServerContext(certificateFile: missing, keyFile: pair.keyFile)
        }
        #expect(throws: TLSError.credentialFile(path: missing, problem: noFile)) {
            try TLSServerContext(certificateFile: pair.certificateFile, keyFile: missing)
        }
    }

    @Test func aCertificateFileWithoutACertificate() throws {
        let text = try pair.directory.write("notes.txt", "not a certificate\n")
        #expect(throws: TLSError.credentialFile(path: text, problem: .noCertificate)) {
            try TLSServerContext(certificateFile: text, keyFile: pair.keyFile)
        }
        // The two files swapped: the key file holds PEM, but no certificate.
        #expect(throws: TLSError.credentialFile(path: pair.keyFile, problem: .noCertificate)) {
            try TLSServerContext(certificateFile: pair.keyFile, keyFile: pair.certificateFile)
        }
    }

    @Test func aKeyFileWithoutAKey() throws {
        let text = try pair.directory.write("notes.txt", "not a key\n")
        #expect(throws: TLSError.credentialFile(path: text, problem: .noPrivateKey)) {
            try TLSServerContext(certificateFile: pair.certificateFile, keyFile: text)
        }
        #expect(throws: TLSError.credentialFile(path: pair.certificateFile, problem: .noPrivateKey)) {
            try TLSServerContext(certificateFile: pair.certificateFile, keyFile: pair.certificateFile)
        }
    }

    @Test func aKeyOfAnotherCertificateIsAMismatchNamingBothFiles() throws {
        let other = try GeneratedPair()
        let error = TLSError.credentialFile(
            path: other.keyFile, problem: .keyMismatch(certificateFile: pair.certificateFile))
        #expect(throws: error) { try TLSServerContext(certificateFile: pair.certificateFile, keyFile: other.keyFile) }
        #expect(
            error.description
                == "TLS file \(other.keyFile): not the key of the certificate in \(pair.certificateFile)")
    }

    @Test func anRSAKeyBesideAnECCertificateIsAMismatch() throws {
        let rsa = pair.directory.path("rsa.key")
        let output = try Program.run(
            "/usr/bin/openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", rsa])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(
            throws: TLSError.credentialFile(path: rsa, problem: .keyMismatch(certificateFile: pair.certificateFile))
        ) {
            try TLSServerContext(certificateFile: pair.certificateFile, keyFile: rsa)
        }
    }

    /// `openssl pkey` writes PKCS #8 ("ENCRYPTED PRIVATE KEY"), `openssl ec` the traditional
    /// form ("EC PRIVATE KEY" with a "Proc-Type: 4,ENCRYPTED" header).
    @Test(arguments: ["pkey", "ec"])
    func anEncryptedKeyIsRefusedWithoutAskingForAPassphrase(tool: String) throws {
        let encrypted = pair.directory.path("encrypted.key")
        let output = try Program.run(
            "/usr/bin/openssl", [tool, "-in", pair.keyFile, "-aes256", "-passout", "pass:secret", "-out", encrypted])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(throws: TLSError.credentialFile(path: encrypted, problem: .encryptedKey)) {
            try TLSServerContext(certificateFile: pair.certificateFile, keyFile: encrypted)
        }
    }

    @Test func aKeyInTheTraditionalECFormLoads() throws {
        let traditional = pair.directory.path("traditional.key")
        let output = try Program.run("/usr/bin/openssl", ["ec", "-in", pair.keyFile, "-out", traditional])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(try Files.read(traditional).starts(with: Array("-----BEGIN EC PRIVATE KEY-----".utf8)))
        _ = try TLSServerContext(certificateFile: pair.certificateFile, keyFile: traditional)
    }
}
