import COpenSSL
import TLS

/// The server end of a TLS session for tests, in memory: OpenSSL with two memory BIOs,
/// the certificate and key from `TestPKI`. `exchange` shuttles ciphertext between it and a
/// client `TLSConnection` until neither has anything more to say.
final class MemoryTLSServer {
    private let context: OpaquePointer
    let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer

    init(pki: TestPKI) {
        context = SSL_CTX_new(TLS_server_method())!
        precondition(SSL_CTX_use_certificate_chain_file(context, pki.serverCertificate) == 1)
        precondition(SSL_CTX_use_PrivateKey_file(context, pki.serverKey, SSL_FILETYPE_PEM) == 1)
        ssl = SSL_new(context)!
        input = BIO_new(BIO_s_mem())!
        output = BIO_new(BIO_s_mem())!
        SSL_set_bio(ssl, input, output)
        SSL_set_accept_state(ssl)
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// Moves ciphertext both ways and steps both handshakes, at most `rounds` times.
    /// - Returns: the client's last handshake result.
    @discardableResult
    func exchange(with client: TLSConnection, rounds: Int = 10) throws(TLSError) -> TLSResult {
        var last = TLSResult.wantRead
        for _ in 0..<rounds {
            last = try client.handshake()
            feed(client.takeCiphertext())
            ERR_clear_error()
            _ = SSL_do_handshake(ssl)
            let reply = take()
            if reply.isEmpty, case .processed = last { break }
            reply.withUnsafeBytes { _ = client.receiveCiphertext($0) }
        }
        return last
    }

    func feed(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        _ = bytes.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) }
    }

    func take() -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { return bytes }
            bytes.append(contentsOf: chunk[0..<Int(count)])
        }
    }

    /// Plaintext the client sent, as far as it has arrived.
    func readPlaintext() -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            var count = 0
            guard chunk.withUnsafeMutableBytes({ SSL_read_ex(ssl, $0.baseAddress, $0.count, &count) }) == 1 else {
                return bytes
            }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    func writePlaintext(_ bytes: [UInt8]) {
        var written = 0
        _ = bytes.withUnsafeBytes { SSL_write_ex(ssl, $0.baseAddress, $0.count, &written) }
    }

    /// True once the client's close_notify was read.
    var receivedCloseNotify: Bool { SSL_get_shutdown(ssl) & Int32(SSL_RECEIVED_SHUTDOWN) != 0 }

    func sendCloseNotify() { _ = SSL_shutdown(ssl) }
}
