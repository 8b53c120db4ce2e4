import COpenSSL
import COpenSSLShim
import EventLoop
import Glibc

/// What a handshake, read or write step did. Not failures (those throw `TLSError`).
public enum TLSResult: Equatable, Sendable {
    /// This many plaintext bytes moved (for a handshake: it is complete, count 0).
    case processed(Int)
    /// Nothing more until ciphertext arrives from the peer: feed it, then call again.
    case wantRead
    /// The outgoing ciphertext buffer is full: send it to the peer, then call again.
    case wantWrite
    /// Read only: the peer sent close_notify; no more data will come.
    case closed
}

/// One TLS session, client or server side, as a state machine that does no I/O itself:
/// OpenSSL talks to a BIO pair, and the owner moves ciphertext between that pair and the
/// network (`TLSConnection+Ciphertext.swift`: straight to and from a non-blocking `Socket`,
/// or as bytes for tests). Plaintext goes through `handshake`, `read`, `write` and
/// `shutdown`. The two sides differ only in how they are made (here and
/// `TLSConnection+Server.swift`); every step after that is the same code.
///
/// Why a BIO pair and not SSL_set_fd: every socket call stays ours (MSG_NOSIGNAL, EINTR,
/// errno in a `SystemError`), the memory per connection is bounded by the pair's buffers,
/// and the whole machine can be driven in memory in tests.
///
/// The owner's loop: after any step, `sendCiphertext(to:)` and keep `.write` interest while
/// it returns false; on readable, `receiveCiphertext(from:)` then repeat the step that
/// returned `.wantRead`. A client always verifies: the chain against the context's trust
/// store, and `serverName` against the certificate (SAN, no partial wildcards).
///
/// Threading: not Sendable; one thread (the owning loop's) uses it. Errors are sticky:
/// after a throw every further step throws the same error.
public final class TLSConnection {
    public enum State: Equatable, Sendable {
        case handshaking
        case established
        /// Our close_notify was queued (`shutdown`), or the peer's arrived.
        case closed
        case failed(TLSError)
    }

    public internal(set) var state: State = .handshaking
    /// A client's: the name sent as SNI and required in the certificate. Nil on a server
    /// connection, whose peer's choice is `requestedServerName`.
    public let serverName: String?
    let ssl: OpaquePointer
    /// Our end of the BIO pair: ciphertext from the peer is written here, ciphertext for
    /// the peer is read from here.
    let network: OpaquePointer

    /// - Parameter serverName: a host name, e.g. `dns.quad9.net` (sent as SNI, matched
    ///   against the DNS names of the certificate), or an IP literal (no SNI; matched
    ///   against its IP addresses).
    /// - Throws: `TLSError.configuration` when OpenSSL cannot make the session or takes
    ///   the name (an empty or over-long name).
    public convenience init(context: TLSContext, serverName: String) throws(TLSError) {
        try self.init(session: context.context, serverName: serverName)
        SSL_set_connect_state(ssl)
        let named: Bool
        if Self.isIPLiteral(serverName) {
            // RFC 6066 §3: no SNI for an address; the certificate must list it (iPAddress SAN).
            named = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) == 1
        } else {
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            named = pg_ssl_set_server_name(ssl, serverName) == 1 && SSL_set1_host(ssl, serverName) == 1
        }
        guard named else {
            throw .configuration("server name \"\(serverName)\": \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
        }
        if context.skipValidityPeriod?() == true {
            X509_VERIFY_PARAM_set_flags(SSL_get0_param(ssl), UInt(X509_V_FLAG_NO_CHECK_TIME))
        }
    }

    /// The session and its BIO pair, for either side; the side's own init says which
    /// (SSL_set_connect_state or SSL_set_accept_state) before the first step.
    init(session context: OpaquePointer, serverName: String?) throws(TLSError) {
        self.serverName = serverName
        ErrorQueue.clear()
        guard let ssl = SSL_new(context) else {
            throw .configuration("cannot create a TLS session: \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
        }
        var inner: OpaquePointer?
        var outer: OpaquePointer?
        // 0: OpenSSL's default pair buffers (17 KiB each way), one full record.
        guard BIO_new_bio_pair(&inner, 0, &outer, 0) == 1, let inner, let outer else {
            SSL_free(ssl)
            throw .configuration("cannot create a BIO pair: \(ErrorQueue.reason(ErrorQueue.drainOldest()))")
        }
        self.ssl = ssl
        network = outer
        SSL_set_bio(ssl, inner, inner)  // the session owns the inner end from here
        pg_ssl_set_nonblocking_modes(ssl)
    }

    private static func isIPLiteral(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET, text, &address) == 1 || inet_pton(AF_INET6, text, &address) == 1
    }

    deinit {
        SSL_free(ssl)
        BIO_free(network)
    }

    /// Advances the handshake: `.processed(0)` once complete (then at once on every call),
    /// else what it waits for.
    /// - Throws: `.handshakeFailed` with the verification result or OpenSSL's reason.
    public func handshake() throws(TLSError) -> TLSResult {
        switch state {
        case .established, .closed: return .processed(0)
        case .failed(let error): throw error
        case .handshaking: break
        }
        ErrorQueue.clear()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            state = .established
            return .processed(0)
        }
        return try outcome(of: result)
    }

    /// Reads decrypted bytes, at most `maxBytes`, appending to `buffer`. Call until it
    /// returns `.wantRead`: one call yields at most one record.
    public func read(into buffer: inout ByteBuffer, maxBytes: Int = 16_384) throws(TLSError) -> TLSResult {
        if case .handshaking = state {
            let progress = try handshake()
            guard case .processed = progress else { return progress }
        }
        switch state {
        case .failed(let error): throw error
        case .closed: return .closed
        default: break
        }
        var count = 0
        var failure: Int32 = 1
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: maxBytes) { space in
            ErrorQueue.clear()
            failure = SSL_read_ex(ssl, space.baseAddress, min(space.count, maxBytes), &count)
            return failure == 1 ? count : 0
        }
        if failure == 1 { return .processed(count) }
        return try outcome(of: failure)
    }

    /// Encrypts as much of `bytes` as fits in the outgoing buffer. `.processed(n)` with n
    /// short of `bytes.count` (or `.wantWrite`): send ciphertext, then write the rest.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(TLSError) -> TLSResult {
        guard bytes.count > 0 else { return .processed(0) }
        if case .handshaking = state {
            let progress = try handshake()
            guard case .processed = progress else { return progress }
        }
        switch state {
        case .failed(let error): throw error
        case .closed: throw .unusable
        default: break
        }
        ErrorQueue.clear()
        var count = 0
        let result = SSL_write_ex(ssl, bytes.baseAddress, bytes.count, &count)
        if result == 1 { return .processed(count) }
        return try outcome(of: result)
    }

    /// Writes from `buffer`'s readable bytes, consuming what was taken.
    public func write(from buffer: inout ByteBuffer) throws(TLSError) -> TLSResult {
        var result = TLSResult.processed(0)
        var failure: TLSError?
        buffer.readWithUnsafeReadableBytes { bytes in
            do throws(TLSError) { result = try write(bytes) } catch { failure = error }
            if case .processed(let count) = result { return count }
            return 0
        }
        if let failure { throw failure }
        return result
    }

    /// Queues close_notify (RFC 8446 §6.1) when the session is up; send the ciphertext
    /// before closing the socket. Idempotent; the connection is unusable afterwards.
    public func shutdown() {
        if case .established = state {
            ErrorQueue.clear()
            _ = SSL_shutdown(ssl)
            ErrorQueue.clear()
        }
        if case .failed = state { return }
        state = .closed
    }

    /// Maps a failed SSL call to a result or a sticky error.
    private func outcome(of result: Int32) throws(TLSError) -> TLSResult {
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN:
            state = .closed
            return .closed
        default:
            let handshaking = state == .handshaking
            let error = ErrorQueue.failure(of: ssl, handshaking: handshaking, sslError: code)
            state = .failed(error)
            throw error
        }
    }
}
