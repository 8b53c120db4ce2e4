import Foundation
import TestSupport

/// A blocking socket from one loopback address (each of 127.0.0.0/8 is this host's own,
/// so each source address is another device to the gateway) to 127.0.0.1:port, with
/// send and receive timeouts so no load loop can hang. Closed when it goes away.
final class LoopbackSocket {
    let descriptor: Int32

    /// nil when the socket could not be made or connected (the caller counts that).
    init?(tcp: Bool, from source: String, to port: UInt16, timeout: Double) {
        guard let descriptor = LoopbackSocketFactory.connect(tcp: tcp, from: source, to: port, timeout: timeout)
        else { return nil }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Sends all of `bytes`; false when the peer is gone or the send timed out.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// One read (a datagram, or what a stream has): its bytes, [] at EOF, nil on timeout or error.
    func receive(max: Int = 65_536) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: max)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count < 0 ? nil : Array(buffer[0..<count])
    }

    /// Whether the peer has closed (EOF or reset) without blocking: for idle connections
    /// the gateway may time out.
    var peerClosed: Bool {
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }
}

/// Seconds on the monotonic clock: every time the soak compares.
func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
