import EventLoop
import Glibc
import SystemIO
import TLS
import TestSupport
import Testing

/// The ciphertext pump over a real non-blocking stream socket (a socketpair): bytes reach
/// the peer, the peer's EOF and a broken pipe become the right outcomes.
@Suite(.blocking) struct TLSSocketTests {
    private func socketPair() throws -> (Socket, Socket) {
        var descriptors: [Int32] = [0, 0]
        _ = try systemCall("socketpair") {
            socketpair(
                AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0,
                &descriptors)
        }
        return (Socket(descriptor: descriptors[0], address: nil), Socket(descriptor: descriptors[1], address: nil))
    }

    @Test func clientHelloGoesOutAndPeerEOFComesIn() throws {
        let pki = try TestPKI()
        let (ours, theirs) = try socketPair()
        let connection = try TLSConnection(context: try TLSContext(caFile: pki.caFile), serverName: TestPKI.serverName)
        #expect(try connection.handshake() == .wantRead)
        #expect(connection.pendingCiphertext > 0)
        #expect(try connection.sendCiphertext(to: ours))
        #expect(connection.pendingCiphertext == 0)
        var received = ByteBuffer()
        #expect(try theirs.read(into: &received) != .wouldBlock)
        #expect(received.getInteger(at: 0, as: UInt8.self) == 22)  // a TLS handshake record

        #expect(try connection.receiveCiphertext(from: ours) == .wouldBlock)
        theirs.close()
        #expect(try connection.receiveCiphertext(from: ours) == .eof)
        #expect(throws: TLSError.peerClosed) { try connection.handshake() }
    }

    @Test func aBrokenPipeIsAnIOErrorWithErrno() throws {
        let pki = try TestPKI()
        let (ours, theirs) = try socketPair()
        theirs.close()
        let connection = try TLSConnection(context: try TLSContext(caFile: pki.caFile), serverName: TestPKI.serverName)
        #expect(try connection.handshake() == .wantRead)
        #expect(throws: TLSError.io(SystemError("send", errno: EPIPE))) { try connection.sendCiphertext(to: ours) }
        #expect(connection.state == .failed(.io(SystemError("send", errno: EPIPE))))
    }
}
