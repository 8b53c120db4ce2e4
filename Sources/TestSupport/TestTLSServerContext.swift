import COpenSSL
import Glibc

/// Server-side TLS for test servers: OpenSSL with a certificate chain and key (e.g. from
/// `TestCertificates`), TLS 1.2 and later. Each accepted connection gets a
/// `TLSServerStream` that runs OpenSSL over memory BIOs and does the socket calls itself
/// (MSG_NOSIGNAL, so a client that went away never raises SIGPIPE in the test process).
/// Plain OpenSSL on purpose, not the TLS module's own server side: the clients under test
/// are checked against a server that shares none of their code.
public final class TestTLSServerContext: @unchecked Sendable {
    // Sendable: the SSL_CTX is configured in init and only read afterwards (SSL_new on a
    // configured context is safe from several threads).
    let context: OpaquePointer

    public struct SetupError: Error, CustomStringConvertible {
        public let description: String
    }

    public init(certificateChain: String, privateKey: String) throws {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw SetupError(description: "SSL_CTX_new failed")
        }
        self.context = context
        guard SSL_CTX_use_certificate_chain_file(context, certificateChain) == 1,
            SSL_CTX_use_PrivateKey_file(context, privateKey, SSL_FILETYPE_PEM) == 1,
            SSL_CTX_check_private_key(context) == 1
        else {
            ERR_clear_error()
            throw SetupError(description: "cannot load \(certificateChain) / \(privateKey)")
        }
    }

    /// The server certificate (for `dot.test` and 127.0.0.1) of a test PKI.
    public convenience init(_ certificates: TestCertificates) throws {
        try self.init(certificateChain: certificates.serverCertificate, privateKey: certificates.serverKey)
    }

    deinit { SSL_CTX_free(context) }
}

/// A blocking byte stream over an accepted socket: plain, or TLS.
protocol ServerStream: AnyObject {
    /// Appends what arrives; false at the end of the stream, on a timeout or an error.
    func read(into buffer: inout [UInt8]) -> Bool
    /// Sends all of `bytes`; false when the peer is gone.
    func write(_ bytes: [UInt8]) -> Bool
}

/// recv/send on a blocking descriptor (SO_RCVTIMEO bounds each read).
final class PlainServerStream: ServerStream {
    let descriptor: Int32

    init(descriptor: Int32) { self.descriptor = descriptor }

    func read(into buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[0..<count]
                return true
            }
            if count < 0 && errno == EINTR { continue }
            return false
        }
    }

    func write(_ bytes: [UInt8]) -> Bool { Self.send(bytes, on: descriptor) }

    static func send(_ bytes: [UInt8], on descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }
}

/// OpenSSL's server side over two memory BIOs on a blocking descriptor.
final class TLSServerStream: ServerStream {
    private let descriptor: Int32
    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer
    private let plain: PlainServerStream

    init?(descriptor: Int32, context: TestTLSServerContext) {
        guard let ssl = SSL_new(context.context) else { return nil }
        self.descriptor = descriptor
        self.ssl = ssl
        input = BIO_new(BIO_s_mem())
        output = BIO_new(BIO_s_mem())
        SSL_set_bio(ssl, input, output)  // the session owns both BIOs from here
        SSL_set_accept_state(ssl)
        plain = PlainServerStream(descriptor: descriptor)
    }

    deinit { SSL_free(ssl) }

    /// Runs the handshake; false when it failed (e.g. the client rejected our certificate).
    func handshake() -> Bool {
        while true {
            ERR_clear_error()
            let result = SSL_do_handshake(ssl)
            guard flush() else { return false }
            if result == 1 { return true }
            guard SSL_get_error(ssl, result) == SSL_ERROR_WANT_READ, receive() else {
                ERR_clear_error()
                return false
            }
        }
    }

    func read(into buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            var count = 0
            ERR_clear_error()
            let result = chunk.withUnsafeMutableBytes { SSL_read_ex(ssl, $0.baseAddress, $0.count, &count) }
            if result == 1 {
                buffer += chunk[0..<count]
                return true
            }
            guard SSL_get_error(ssl, result) == SSL_ERROR_WANT_READ, flush(), receive() else {
                ERR_clear_error()
                return false
            }
        }
    }

    func write(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return true }
        var written = 0
        ERR_clear_error()
        // A memory BIO grows as needed, so one call takes everything.
        guard bytes.withUnsafeBytes({ SSL_write_ex(ssl, $0.baseAddress, $0.count, &written) }) == 1 else {
            ERR_clear_error()
            return false
        }
        return flush()
    }

    /// Sends close_notify (a graceful end; `drop` replies skip this).
    func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        _ = flush()
    }

    /// Sends every record OpenSSL has produced.
    private func flush() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { return true }
            guard PlainServerStream.send(Array(chunk[0..<Int(count)]), on: descriptor) else { return false }
        }
    }

    /// Feeds the next bytes from the socket to OpenSSL; false at its end.
    private func receive() -> Bool {
        var bytes: [UInt8] = []
        guard plain.read(into: &bytes) else { return false }
        return bytes.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) } == Int32(bytes.count)
    }
}
