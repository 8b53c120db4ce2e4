import COpenSSL
import COpenSSLShim
import Glibc
import SystemIO

/// A self-signed server certificate for the gateway's own HTTPS page, made on the device:
/// nothing to buy, and nothing that must reach a CA online. A parent's browser warns once;
/// the parent compares the fingerprint it shows with the gateway's
/// (`TLSServerContext.fingerprintSHA256`) and trusts it.
///
/// What it holds (RFC 5280 §4.1, §4.2.1):
/// - X.509 v3 with an ECDSA P-256 key: every browser takes it, and signing a handshake
///   with it is cheap on a small board;
/// - a random positive 16-byte serial (§4.1.2.2), unique without a counter to keep, so a
///   new certificate is never confused with an old one a browser remembers;
/// - subjectAltName with every DNS name and IP address: browsers match those, never the
///   common name;
/// - basicConstraints CA:FALSE, keyUsage digitalSignature, extendedKeyUsage serverAuth: a
///   browser that trusts it trusts this server and nothing it could sign;
/// - signed with SHA-256, valid from a day before `now` (a device whose clock is a little
///   behind still accepts it) for `validDays` days.
public enum SelfSignedCertificate {
    /// One day, the margin before `now` and the unit of `validDays`.
    static let day = 86_400

    /// Makes a new key and a certificate for it.
    /// - Parameters:
    ///   - commonName: the subject and issuer CN, 1 to 64 characters (RFC 5280's bound):
    ///     what a browser's certificate viewer shows, e.g. "Phosra Gate".
    ///   - dnsNames: host names (letters, digits, hyphens, dots; no wildcards), lowercased.
    ///   - ipAddresses: IPv4 or IPv6 literals. At least one name or address in all.
    ///   - validDays: 1 to 36,500. Apple's systems refuse a TLS server certificate valid
    ///     for more than 825 days, so a gateway that iPhones visit stays at or below that.
    ///   - now: the wall-clock time of issue.
    /// - Returns: the certificate and the unencrypted PKCS #8 private key, both PEM.
    /// - Throws: `TLSError.configuration` naming the bad argument, or OpenSSL's reason.
    public static func make(
        commonName: String, dnsNames: [String], ipAddresses: [String], validDays: Int,
        now: WallTime = SystemClock().wall()
    ) throws(TLSError) -> (certificatePEM: [UInt8], keyPEM: [UInt8]) {
        let hosts = try dnsNames.map { name throws(TLSError) in try hostName(name) }
        try validate(commonName: commonName, ipAddresses: ipAddresses, validDays: validDays, names: hosts.count)
        ErrorQueue.clear()
        guard let key = pg_evp_ec_gen("P-256") else { throw failure("generate a P-256 key") }
        defer { EVP_PKEY_free(key) }
        guard let certificate = X509_new() else { throw failure("allocate a certificate") }
        defer { X509_free(certificate) }
        let issued = Int(now.unixSeconds)
        try fill(
            certificate, key: key, commonName: commonName, dnsNames: hosts, ipAddresses: ipAddresses,
            validity: (issued - day, issued + validDays * day))
        guard X509_sign(certificate, key, EVP_sha256()) > 0 else { throw failure("sign the certificate") }
        let certificatePEM = try pem("write the certificate") { PEM_write_bio_X509($0, certificate) }
        let keyPEM = try pem("write the key") { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) }
        return (certificatePEM, keyPEM)
    }

    /// Writes a pair as `TLSServerContext(certificateFile:keyFile:)` reads it. Each file
    /// is replaced atomically (`Files.writeAtomically`: a temporary file beside it, fsync,
    /// rename): a crash leaves the old file or the new one, never half of one. The key has
    /// mode 0600 from the moment its temporary file exists; the certificate, public, 0644.
    /// The two renames are not one step: a failure between them leaves a key and a
    /// certificate that do not match, which loading reports (`.keyMismatch`).
    /// - Throws: `TLSError.credentialFile` with the file and the failed call.
    public static func write(
        certificatePEM: [UInt8], keyPEM: [UInt8], certificateFile: String, keyFile: String
    ) throws(TLSError) {
        for (path, bytes, mode) in [(keyFile, keyPEM, mode_t(0o600)), (certificateFile, certificatePEM, 0o644)] {
            do {
                try Files.writeAtomically(path, bytes, mode: mode)
            } catch {
                throw .credentialFile(path: path, problem: .io(error))
            }
        }
    }

    /// A DNS name as the certificate carries it: lowercase LDH labels of 1 to 63 bytes,
    /// at most 253 in all. Stricter than the IA5String a SAN allows, so that a typo fails
    /// here rather than as a name no browser ever matches.
    static func hostName(_ name: String) throws(TLSError) -> String {
        let lower = name.lowercased()
        let labels = lower.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        let valid =
            !lower.isEmpty && lower.utf8.count <= 253
            && labels.allSatisfy { label in
                (1...63).contains(label.count) && label.first != UInt8(ascii: "-") && label.last != UInt8(ascii: "-")
                    && label.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }
            }
        guard valid else { throw .configuration("self-signed certificate: DNS name \"\(name)\" is not a host name") }
        return lower
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func validate(
        commonName: String, ipAddresses: [String], validDays: Int, names: Int
    ) throws(TLSError) {
        guard (1...64).contains(commonName.unicodeScalars.count) else {
            throw .configuration("self-signed certificate: the common name must have 1 to 64 characters")
        }
        for address in ipAddresses {
            var bytes = in6_addr()
            guard inet_pton(AF_INET, address, &bytes) == 1 || inet_pton(AF_INET6, address, &bytes) == 1 else {
                throw .configuration("self-signed certificate: \"\(address)\" is not an IP address")
            }
        }
        guard names + ipAddresses.count > 0 else {
            throw .configuration("self-signed certificate: no DNS name or IP address to certify")
        }
        guard (1...36_500).contains(validDays) else {
            throw .configuration("self-signed certificate: valid days must be 1 to 36500, not \(validDays)")
        }
    }

    /// OpenSSL's reason for a failed step.
    static func failure(_ step: String) -> TLSError {
        .configuration("self-signed certificate: cannot \(step): \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
    }

    /// What `write` put into a memory BIO, as bytes.
    private static func pem(_ step: String, _ write: (OpaquePointer) -> Int32) throws(TLSError) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw failure(step) }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw failure(step) }
        var bytes = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
        guard BIO_read(bio, &bytes, Int32(bytes.count)) == Int32(bytes.count) else { throw failure(step) }
        return bytes
    }
}
