import EventLoop
import TLS
import TestSupport
import Testing

/// The TLS state machine driven in memory against an OpenSSL server (`MemoryTLSServer`):
/// verification outcomes, data both ways, close_notify, and each error path.
@Suite(.blocking) struct TLSConnectionTests {
    let pki: TestPKI

    init() throws { pki = try TestPKI() }

    private func client(caFile: String?, name: String = TestPKI.serverName) throws -> TLSConnection {
        try TLSConnection(context: try TLSContext(caFile: caFile), serverName: name)
    }

    @Test func handshakeWithTheRightCAAndNameThenDataBothWaysAndCloseNotify() throws {
        let server = MemoryTLSServer(pki: pki)
        let connection = try client(caFile: pki.caFile)
        #expect(connection.state == .handshaking)
        #expect(try server.exchange(with: connection) == .processed(0))
        #expect(connection.state == .established)

        let query = Array("hello over TLS".utf8)
        #expect(try query.withUnsafeBytes { try connection.write($0) } == .processed(query.count))
        server.feed(connection.takeCiphertext())
        #expect(server.readPlaintext() == query)

        server.writePlaintext(Array("answer".utf8))
        server.take().withUnsafeBytes { _ = connection.receiveCiphertext($0) }
        var buffer = ByteBuffer()
        #expect(try connection.read(into: &buffer) == .processed(6))
        #expect(buffer.readString(length: 6) == "answer")
        #expect(try connection.read(into: &buffer) == .wantRead)

        // The peer's close_notify is a clean end, not an error.
        server.sendCloseNotify()
        server.take().withUnsafeBytes { _ = connection.receiveCiphertext($0) }
        #expect(try connection.read(into: &buffer) == .closed)
        #expect(connection.state == .closed)
    }

    @Test func ourShutdownSendsCloseNotifyAndEndsWriting() throws {
        let server = MemoryTLSServer(pki: pki)
        let connection = try client(caFile: pki.caFile)
        try server.exchange(with: connection)
        connection.shutdown()
        server.feed(connection.takeCiphertext())
        _ = server.readPlaintext()
        #expect(server.receivedCloseNotify)
        #expect(throws: TLSError.unusable) { try [1].withUnsafeBytes { try connection.write($0) } }
    }

    @Test func wrongServerNameFailsVerification() throws {
        let connection = try client(caFile: pki.caFile, name: "wrong.test")
        #expect(throws: TLSError.handshakeFailed("certificate verify failed: hostname mismatch")) {
            try MemoryTLSServer(pki: pki).exchange(with: connection)
        }
        // Sticky: the failed session never carries data.
        #expect(throws: TLSError.handshakeFailed("certificate verify failed: hostname mismatch")) {
            try [1].withUnsafeBytes { try connection.write($0) }
        }
    }

    @Test func anIPLiteralIsMatchedAgainstTheCertificatesAddresses() throws {
        #expect(
            try MemoryTLSServer(pki: pki).exchange(with: try client(caFile: pki.caFile, name: "127.0.0.1"))
                == .processed(0))
        #expect(throws: TLSError.handshakeFailed("certificate verify failed: IP address mismatch")) {
            try MemoryTLSServer(pki: pki).exchange(with: try client(caFile: pki.caFile, name: "127.0.0.2"))
        }
    }

    @Test(arguments: [false, true])
    func untrustedCAFailsVerification(withOtherCA: Bool) throws {
        let connection = try client(caFile: withOtherCA ? pki.otherCAFile : nil)
        #expect(throws: TLSError.handshakeFailed("certificate verify failed: unable to get local issuer certificate")) {
            try MemoryTLSServer(pki: pki).exchange(with: connection)
        }
    }

    @Test func aPeerThatDoesNotSpeakTLSFailsTheHandshake() throws {
        let connection = try client(caFile: pki.caFile)
        #expect(try connection.handshake() == .wantRead)
        #expect(!connection.takeCiphertext().isEmpty)  // the ClientHello
        Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8).withUnsafeBytes { _ = connection.receiveCiphertext($0) }
        #expect(throws: TLSError.handshakeFailed("wrong version number")) { try connection.handshake() }
    }

    @Test func endOfStreamDuringTheHandshakeIsPeerClosed() throws {
        let connection = try client(caFile: pki.caFile)
        #expect(try connection.handshake() == .wantRead)
        connection.receiveEndOfStream()
        #expect(throws: TLSError.peerClosed) { try connection.handshake() }
        #expect(throws: TLSError.peerClosed) { try connection.handshake() }
        #expect(connection.state == .failed(.peerClosed))
    }

    @Test func endOfStreamWithoutCloseNotifyAfterTheHandshakeIsAnError() throws {
        let server = MemoryTLSServer(pki: pki)
        let connection = try client(caFile: pki.caFile)
        try server.exchange(with: connection)
        connection.receiveEndOfStream()
        var buffer = ByteBuffer()
        #expect(throws: TLSError.peerClosed) { try connection.read(into: &buffer) }
    }

    @Test func aMissingCAFileIsAConfigurationError() {
        #expect(throws: TLSError.configuration("CA file /nonexistent/ca.pem: No such file or directory")) {
            try TLSContext(caFile: "/nonexistent/ca.pem")
        }
    }

    @Test func aCAFileWithoutCertificatesIsAConfigurationError() throws {
        #expect(throws: TLSError.self) { try TLSContext(caFile: pki.serverKey) }
    }
}
