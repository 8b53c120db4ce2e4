import COpenSSL
import COpenSSLShim
import EventLoop
import Glibc
import SystemIO

/// The network side of a `TLSConnection`: ciphertext between its BIO pair and a
/// non-blocking socket (copied straight into and out of the pair's buffers with
/// BIO_nwrite0/BIO_nread0, no staging buffer), or as plain bytes for tests.
extension TLSConnection {
    /// Ciphertext waiting to be sent to the peer. While above zero, keep `.write` interest.
    public var pendingCiphertext: Int { Int(BIO_ctrl_pending(network)) }

    /// Sends waiting ciphertext until done or the socket is full.
    /// - Returns: true when nothing is left to send.
    /// - Throws: `.io` with the socket's error (EPIPE, ECONNRESET); the connection fails.
    public func sendCiphertext(to socket: Socket) throws(TLSError) -> Bool {
        while true {
            var chunk: UnsafeMutablePointer<CChar>?
            let available = BIO_nread0(network, &chunk)
            guard available > 0, let start = chunk else { return true }
            let result: IOResult
            do {
                result = try socket.write(UnsafeRawBufferPointer(start: start, count: Int(available)))
            } catch {
                throw fail(.io(error))
            }
            guard case .processed(let count) = result, count > 0 else { return false }
            _ = BIO_nread(network, &chunk, Int32(count))
            if count < Int(available) { return false }
        }
    }

    /// Reads ciphertext from `socket` into the session, as much as its buffer takes.
    /// - Returns: `.processed(n)` (0 when the buffer is full: read plaintext first),
    ///   `.wouldBlock`, or `.eof` once the peer shut down the stream (later steps see it).
    /// - Throws: `.io` with the socket's error; the connection fails.
    public func receiveCiphertext(from socket: Socket) throws(TLSError) -> IOResult {
        var space: UnsafeMutablePointer<CChar>?
        let room = BIO_nwrite0(network, &space)
        guard room > 0, let start = space else { return .processed(0) }
        let descriptor = socket.descriptor
        let received: Int?
        do {
            received = try nonBlockingCall("recv", subject: socket.address?.description) {
                recv(descriptor, start, Int(room), 0)
            }
        } catch {
            throw fail(.io(error))
        }
        guard let received else { return .wouldBlock }
        guard received > 0 else {
            receiveEndOfStream()
            return .eof
        }
        _ = BIO_nwrite(network, &space, Int32(received))
        return .processed(received)
    }

    /// Feeds ciphertext given as bytes (memory transports, tests).
    /// - Returns: how many were taken (fewer when the buffer is full).
    @discardableResult
    public func receiveCiphertext(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard bytes.count > 0 else { return 0 }
        return max(Int(BIO_write(network, bytes.baseAddress, Int32(clamping: bytes.count))), 0)
    }

    /// The peer's transport ended: reads after the buffered ciphertext see EOF.
    public func receiveEndOfStream() {
        _ = pg_bio_shutdown_write(network)
    }

    /// Takes all waiting ciphertext as bytes (memory transports, tests).
    public func takeCiphertext() -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while pendingCiphertext > 0 {
            let count = chunk.withUnsafeMutableBytes { BIO_read(network, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<Int(count)])
        }
        return bytes
    }

    /// Records a transport failure as the sticky state and returns it for throwing.
    func fail(_ error: TLSError) -> TLSError {
        if case .failed(let earlier) = state { return earlier }
        state = .failed(error)
        return error
    }
}
