import COpenSSL
import COpenSSLShim
import SystemIO

/// Why TLS failed. One error type for the module (docs/ARCHITECTURE.md#house-habits (6)); the texts are OpenSSL's
/// own reason strings, so a log line reads like `openssl s_client` would.
public enum TLSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The context could not be set up, e.g. an unreadable or empty CA file.
    case configuration(String)
    /// The handshake failed. A certificate that did not verify reads
    /// `"certificate verify failed: hostname mismatch"` or `"certificate verify failed:
    /// unable to get local issuer certificate"` (the X509 verification result); anything
    /// else is OpenSSL's reason, e.g. `"wrong version number"` for a peer not speaking TLS.
    case handshakeFailed(String)
    /// A fatal TLS error after the handshake: a corrupt record, an alert from the peer.
    case protocolError(String)
    /// The socket under the connection failed (errno and call), e.g. ECONNRESET.
    case io(SystemError)
    /// The peer closed the transport without a close_notify alert. Data may have been cut
    /// short (RFC 8446 §6.1), so this is an error, unlike a clean `.closed` read result.
    case peerClosed
    /// The connection already failed or was shut down and cannot be used again.
    case unusable
    /// A server's certificate or key file is unusable (`TLSServerContext`), or a generated
    /// pair could not be written (`SelfSignedCertificate.write`): which file, and why.
    case credentialFile(path: String, problem: CredentialProblem)

    /// What is wrong with a certificate or key file. The cheap, common mistakes have cases
    /// of their own (a wrong path, the two files swapped, a key from another pair); anything
    /// else is OpenSSL's reason.
    public enum CredentialProblem: Equatable, Sendable, CustomStringConvertible {
        /// Opening, reading or writing it failed: errno and call (ENOENT, EACCES).
        case io(SystemError)
        /// It holds no PEM certificate: not PEM at all, or only other blocks (a key).
        case noCertificate
        /// It holds no PEM private key: not PEM at all, or only other blocks (a certificate).
        case noPrivateKey
        /// The key is encrypted with a passphrase, which nobody is there to type in.
        case encryptedKey
        /// The key is not the private half of the leaf certificate in this other file.
        case keyMismatch(certificateFile: String)
        /// OpenSSL refused what it holds: its reason, e.g. "ee key too small" (a key under
        /// OpenSSL's security level).
        case rejected(String)

        public var description: String {
            switch self {
            case .io(let error): "\(error.call): \(error.reason)"
            case .noCertificate: "no PEM certificate in it"
            case .noPrivateKey: "no PEM private key in it"
            case .encryptedKey: "the key is encrypted with a passphrase; store it without one"
            case .keyMismatch(let certificateFile): "not the key of the certificate in \(certificateFile)"
            case .rejected(let reason): reason
            }
        }
    }

    public var description: String {
        switch self {
        case .configuration(let text): "TLS configuration: \(text)"
        case .handshakeFailed(let text): text
        case .protocolError(let text): "TLS error: \(text)"
        case .io(let error): error.description
        case .peerClosed: "connection closed by peer without close_notify"
        case .unusable: "TLS connection no longer usable"
        case .credentialFile(let path, let problem): "TLS file \(path): \(problem)"
        }
    }
}

/// OpenSSL's per-thread error queue. Cleared before every call that may fail (so a stale
/// entry from another connection on the same loop thread is never blamed on this one) and
/// drained after a failure.
enum ErrorQueue {
    static func clear() { ERR_clear_error() }

    /// Empties the queue and returns its oldest entry (the root cause; later entries are
    /// consequences), or 0 when it was empty.
    static func drainOldest() -> UInt {
        var oldest: UInt = 0
        while case let code = ERR_get_error(), code != 0 {
            if oldest == 0 { oldest = code }
        }
        return oldest
    }

    /// OpenSSL's reason text for `code`, e.g. "wrong version number".
    static func reason(_ code: UInt) -> String {
        guard code != 0 else { return "unknown TLS failure" }
        if let text = ERR_reason_error_string(code) { return String(cString: text) }
        return "OpenSSL error \(code)"
    }

    /// The error for a call that failed with SSL_ERROR_SSL (or SSL_ERROR_SYSCALL, which
    /// over a BIO pair can only mean the peer's EOF reached OpenSSL).
    static func failure(of ssl: OpaquePointer, handshaking: Bool, sslError: Int32) -> TLSError {
        let code = drainOldest()
        if sslError == SSL_ERROR_SYSCALL || pg_err_is_unexpected_eof(code) != 0 { return .peerClosed }
        if pg_err_is_certificate_verify_failed(code) != 0 {
            let result = SSL_get_verify_result(ssl)
            let detail = X509_verify_cert_error_string(result).map { String(cString: $0) } ?? "error \(result)"
            return .handshakeFailed("\(reason(code)): \(detail)")
        }
        return handshaking ? .handshakeFailed(reason(code)) : .protocolError(reason(code))
    }
}
