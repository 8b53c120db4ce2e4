import COpenSSL
import COpenSSLShim
import Glibc
import SystemIO

/// Loading a server's certificate chain and key. The files are read with `Files` and
/// parsed from memory, so an unreadable file is errno and call (not OpenSSL's "system
/// lib"), and each common mistake is a named `TLSError.CredentialProblem`.
extension TLSServerContext {
    /// A chain with a few intermediates is a few KiB; anything near this is not one.
    static let fileLimit = 1 << 20

    /// Loads the leaf and the certificates after it into `context`.
    /// - Returns: the leaf, owned by `context`.
    static func useCertificateChain(_ path: String, in context: OpaquePointer) throws(TLSError) -> OpaquePointer {
        let bio = try memoryBIO(try read(path), path)
        defer { BIO_free(bio) }
        ErrorQueue.clear()
        guard let leaf = PEM_read_bio_X509(bio, nil, nil, nil) else {
            throw failure(path, notPEM: .noCertificate)
        }
        defer { X509_free(leaf) }  // the context takes its own reference
        guard SSL_CTX_use_certificate(context, leaf) == 1 else { throw rejected(path) }
        while let next = PEM_read_bio_X509(bio, nil, nil, nil) {
            guard pg_ssl_ctx_add0_chain_cert(context, next) == 1 else {
                X509_free(next)
                throw rejected(path)
            }
        }
        // The loop ends at the end of the file ("no start line"), or at a broken block.
        let end = ErrorQueue.drainOldest()
        guard end == 0 || pg_err_is_pem_no_start_line(end) != 0 else {
            throw .credentialFile(path: path, problem: .rejected(ErrorQueue.reason(end)))
        }
        guard let loaded = SSL_CTX_get0_certificate(context) else { throw rejected(path) }
        return loaded
    }

    /// Loads the private key of `leaf` into `context`, after checking that it is that key:
    /// OpenSSL files a key of another type (an RSA key beside an EC certificate) in a slot
    /// of its own without a word, and then every handshake fails.
    static func usePrivateKey(
        _ path: String, of leaf: OpaquePointer, from certificateFile: String, in context: OpaquePointer
    ) throws(TLSError) {
        let bytes = try read(path)
        let bio = try memoryBIO(bytes, path)
        defer { BIO_free(bio) }
        ErrorQueue.clear()
        // A passphrase callback that has none: OpenSSL's default would prompt on a terminal.
        guard let key = PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil) else {
            throw .credentialFile(path: path, problem: keyProblem(bytes))
        }
        defer { EVP_PKEY_free(key) }
        guard X509_check_private_key(leaf, key) == 1 else {
            ErrorQueue.clear()
            throw .credentialFile(path: path, problem: .keyMismatch(certificateFile: certificateFile))
        }
        guard SSL_CTX_use_PrivateKey(context, key) == 1 else { throw rejected(path) }
    }

    static func read(_ path: String) throws(TLSError) -> [UInt8] {
        do {
            return try Files.read(path, limit: fileLimit)
        } catch {
            throw .credentialFile(path: path, problem: .io(error))
        }
    }

    /// The bytes in a memory BIO (a copy, so the array need not outlive it).
    static func memoryBIO(_ bytes: [UInt8], _ path: String) throws(TLSError) -> OpaquePointer {
        guard let bio = BIO_new(BIO_s_mem()), BIO_write(bio, bytes, Int32(bytes.count)) == Int32(bytes.count)
        else {
            throw .configuration("cannot buffer \(path): \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
        }
        return bio
    }

    /// The error for a failed read or load: `notPEM` when OpenSSL found no block of the
    /// kind it wanted anywhere in the file, else its reason.
    static func failure(_ path: String, notPEM: TLSError.CredentialProblem) -> TLSError {
        let code = ErrorQueue.drainOldest()
        let problem = pg_err_is_pem_no_start_line(code) != 0 ? notPEM : .rejected(ErrorQueue.reason(code))
        return .credentialFile(path: path, problem: problem)
    }

    /// Why a key file OpenSSL could not read failed, from its PEM labels (RFC 7468 §2,
    /// "-----BEGIN label-----"): OpenSSL 3's key decoder says "unsupported" alike for a file
    /// without a key and for a key it cannot read, and "interrupted or cancelled" for one
    /// that wants a passphrase (PKCS #8 "ENCRYPTED PRIVATE KEY", RFC 7468 §11, or the
    /// traditional form's RFC 1421 "Proc-Type: 4,ENCRYPTED" header).
    static func keyProblem(_ bytes: [UInt8]) -> TLSError.CredentialProblem {
        let reason = ErrorQueue.reason(ErrorQueue.drainOldest())
        let lines = bytes.split(separator: UInt8(ascii: "\n")).map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }
        let labels = lines.filter { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("-----") }.map {
            $0.dropFirst("-----BEGIN ".count).dropLast("-----".count)
        }
        guard labels.contains(where: { $0.hasSuffix("PRIVATE KEY") }) else { return .noPrivateKey }
        let encrypted =
            labels.contains("ENCRYPTED PRIVATE KEY") || lines.contains { $0.hasPrefix("Proc-Type: 4,ENCRYPTED") }
        return encrypted ? .encryptedKey : .rejected(reason)
    }

    /// OpenSSL refused what it read, e.g. a key under its security level.
    private static func rejected(_ path: String) -> TLSError {
        .credentialFile(path: path, problem: .rejected(ErrorQueue.reason(ErrorQueue.drainOldest())))
    }

    static func fingerprintSHA256(of certificate: OpaquePointer) throws(TLSError) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else {
            throw .configuration("certificate digest: \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
        }
        let hex = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        for byte in digest[0..<Int(length)] {
            if !text.isEmpty { text.append(UInt8(ascii: ":")) }
            text += [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func notAfter(of certificate: OpaquePointer, in path: String) throws(TLSError) -> Int64 {
        var time = tm()
        guard let end = X509_get0_notAfter(certificate), ASN1_TIME_to_tm(end, &time) == 1 else {
            throw .credentialFile(path: path, problem: .rejected("the certificate's notAfter cannot be read"))
        }
        return Int64(timegm(&time))
    }
}
