import COpenSSL
import COpenSSLShim
import SystemIO

/// A server TLS configuration: one certificate chain and its private key, for the small
/// HTTPS server the gateway runs on its own loops (a parent's page), each accepted
/// connection a `TLSConnection(server:)`.
///
/// The choices, and why:
/// - TLS 1.2 or later, the server's order of cipher suites, and for TLS 1.2 only ECDHE
///   with AEAD ciphers: forward secrecy and no CBC padding oracles, which every browser of
///   the last decade speaks (TLS 1.3's suites are all of that kind already).
/// - No client certificate is asked for: a parent signs in with a password over this
///   channel, and a browser asked for a certificate shows a confusing picker.
/// - No session resumption (no tickets, no session cache): a parent's browser opens a few
///   connections on a local network, where a resumed handshake saves a round trip of a
///   millisecond, while ticket keys would be one more long-lived secret in memory that
///   undoes forward secrecy until rotated, and a cache would be memory per client.
///
/// Threading: like `TLSContext`, immutable once made; share one between loops and threads.
/// It owns its SSL_CTX and frees it when the last reference goes (connections hold their
/// own reference inside OpenSSL).
public final class TLSServerContext: @unchecked Sendable {
    let context: OpaquePointer
    /// SHA-256 of the leaf certificate (its DER form) as browsers show it: uppercase hex
    /// pairs joined by colons. For a self-signed certificate this is what a parent compares
    /// with the browser's warning page before trusting it.
    public let fingerprintSHA256: String
    /// When the leaf certificate expires: seconds since the Unix epoch (notAfter, RFC 5280
    /// §4.1.2.5), for a warning before browsers refuse it.
    public let notAfter: Int64

    /// TLS 1.2 without forward secrecy or AEAD is not offered (see the type's comment).
    static let tls12Ciphers = "ECDHE+AESGCM:ECDHE+CHACHA20"

    /// Reads both files once, at start-up or reload (blocking; never on a loop thread).
    /// - Parameters:
    ///   - certificateFile: PEM: the leaf certificate first, then any intermediates, as a
    ///     CA delivers a "full chain"; other PEM blocks (a key) are skipped.
    ///   - keyFile: PEM: the leaf's private key (PKCS #8, or the traditional RSA/EC forms),
    ///     not encrypted: nobody is there to type a passphrase.
    /// - Throws: `TLSError.credentialFile` naming the file: unreadable (`.io`), no
    ///   certificate or no key in it, a key of another certificate, or OpenSSL's reason
    ///   (e.g. an RSA key under 2048 bits); `.configuration` when OpenSSL cannot make a
    ///   context.
    public init(certificateFile: String, keyFile: String) throws(TLSError) {
        ErrorQueue.clear()
        guard let method = TLS_server_method(), let context = SSL_CTX_new(method) else {
            throw .configuration("cannot create a TLS context: \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
        }
        do throws(TLSError) {
            try Self.configure(context)
            let leaf = try Self.useCertificateChain(certificateFile, in: context)
            try Self.usePrivateKey(keyFile, of: leaf, from: certificateFile, in: context)
            fingerprintSHA256 = try Self.fingerprintSHA256(of: leaf)
            notAfter = try Self.notAfter(of: leaf, in: certificateFile)
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        self.context = context
    }

    deinit { SSL_CTX_free(context) }

    private static func configure(_ context: OpaquePointer) throws(TLSError) {
        guard pg_ssl_ctx_configure_server(context) == 1 else {
            throw .configuration("cannot require TLS 1.2: \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
        }
        guard SSL_CTX_set_cipher_list(context, tls12Ciphers) == 1 else {
            throw .configuration("cipher list: \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
        }
        // TLS 1.3 sends tickets after the handshake unless told to send none.
        guard SSL_CTX_set_num_tickets(context, 0) == 1 else {
            throw .configuration("session tickets: \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
    }
}
