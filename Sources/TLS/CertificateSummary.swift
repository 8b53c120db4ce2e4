import COpenSSL

/// What a parent compares and a check warns about, read from a PEM certificate file
/// without its key (the key may be readable by root only): the leaf's SHA-256 fingerprint,
/// as `TLSServerContext.fingerprintSHA256` and the page's `listening` log line write it,
/// and when it expires.
public struct CertificateSummary: Sendable, Equatable {
    /// Uppercase hex pairs joined by colons, as browsers show it.
    public let fingerprintSHA256: String
    /// Seconds since the Unix epoch (notAfter, RFC 5280 §4.1.2.5).
    public let notAfter: Int64

    /// Reads the first certificate of `path` (blocking).
    /// - Throws: `TLSError.credentialFile` naming the file: unreadable, or no certificate in it.
    public init(file path: String) throws(TLSError) {
        let bio = try TLSServerContext.memoryBIO(try TLSServerContext.read(path), path)
        defer { BIO_free(bio) }
        ErrorQueue.clear()
        guard let leaf = PEM_read_bio_X509(bio, nil, nil, nil) else {
            throw TLSServerContext.failure(path, notPEM: .noCertificate)
        }
        defer { X509_free(leaf) }
        fingerprintSHA256 = try TLSServerContext.fingerprintSHA256(of: leaf)
        notAfter = try TLSServerContext.notAfter(of: leaf, in: path)
    }
}
