import COpenSSL
import COpenSSLShim
import Glibc
import SystemIO

/// A client TLS configuration: TLS 1.2 or later, the peer's certificate chain verified
/// against one trust store, always (SSL_VERIFY_PEER; there is no switch to turn it off,
/// so no caller can forget to turn it back on). The name check is per connection
/// (`TLSConnection`), since every upstream has its own name.
///
/// Threading: immutable once made; share one context between loops and threads (OpenSSL
/// makes creating connections from a configured context thread-safe). It owns its
/// SSL_CTX and frees it when the last reference goes (connections hold their own
/// reference inside OpenSSL, so they outlive it safely).
public final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer
    /// Asked for each new connection: true while the wall clock cannot be trusted (a
    /// board without a real-time clock before NTP), when only the certificate's validity
    /// period goes unchecked — the chain and the name are checked as always.
    let skipValidityPeriod: (@Sendable () -> Bool)?

    /// - Parameter caFile: a PEM bundle of trusted CAs (`ca_file`), used *instead of* the
    ///   system store; nil uses the system's default paths (Debian: /etc/ssl/certs).
    /// - Throws: `TLSError.configuration` when the file cannot be read or holds no
    ///   certificate, or OpenSSL cannot make a context.
    public init(caFile: String? = nil, skipValidityPeriod: (@Sendable () -> Bool)? = nil) throws(TLSError) {
        self.skipValidityPeriod = skipValidityPeriod
        ErrorQueue.clear()
        guard let method = TLS_client_method(), let context = SSL_CTX_new(method) else {
            throw .configuration("cannot create a TLS context: \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
        }
        self.context = context
        guard pg_ssl_ctx_configure_client(context) == 1 else {
            throw .configuration("cannot require TLS 1.2: \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let caFile {
            // Checked first so a missing file reads as errno, not as OpenSSL's "system lib".
            guard Files.exists(caFile) else {
                throw .configuration("CA file \(caFile): \(SystemError("open", errno: ENOENT).reason)")
            }
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw .configuration("CA file \(caFile): \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
            }
        } else if SSL_CTX_set_default_verify_paths(context) != 1 {
            throw .configuration("system CA store: \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
        }
    }

    deinit { SSL_CTX_free(context) }
}
