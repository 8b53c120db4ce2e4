import EventLoop
import TLS
import TestSupport
import Testing

/// The server side of the state machine against its own client side, in memory: both
/// ends are `TLSConnection`s, the server's certificate a fresh self-signed one that the
/// client trusts as its CA file.
@Suite(.blocking) struct TLSServerConnectionTests {
    let pair: GeneratedPair

    init() throws { pair = try GeneratedPair() }

    private func link(serverName: String = GeneratedPair.name) throws -> MemoryLink {
        MemoryLink(
            client: try pair.client(serverName: serverName), server: try TLSConnection(server: pair.serverContext()))
    }

    @Test func handshakeSNIDataBothWaysAndCloseNotify() throws {
        let link = try link()
        #expect(link.server.state == .handshaking)
        #expect(try link.handshake())
        #expect(link.server.state == .established)
        #expect(link.server.serverName == nil)
        #expect(link.server.requestedServerName == GeneratedPair.name)
        #expect(link.client.requestedServerName == nil)

        let request = Array("GET / HTTP/1.1\r\nHost: gate.test\r\n\r\n".utf8)
        #expect(try link.send(request, from: link.client, to: link.server) == request)
        let page = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)
        #expect(try link.send(page, from: link.server, to: link.client) == page)

        // The server ends the session: the client reads a clean close, not an error.
        link.server.shutdown()
        link.shuttle()
        var buffer = ByteBuffer()
        #expect(try link.client.read(into: &buffer) == .closed)
        #expect(throws: TLSError.unusable) { try [1].withUnsafeBytes { try link.server.write($0) } }
    }

    @Test func theClientsCloseNotifyIsACleanEndForTheServer() throws {
        let link = try link()
        #expect(try link.handshake())
        link.client.shutdown()
        link.shuttle()
        var buffer = ByteBuffer()
        #expect(try link.server.read(into: &buffer) == .closed)
        #expect(link.server.state == .closed)
    }

    @Test func messagesLargerThanTheBuffersGoThroughWhole() throws {
        let link = try link()
        #expect(try link.handshake())
        let upload = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(try link.send(upload, from: link.client, to: link.server) == upload)
        let download = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(try link.send(download, from: link.server, to: link.client) == download)
    }

    @Test func aNameOutsideTheCertificateIsRefusedByTheClient() throws {
        let link = try link(serverName: "other.test")
        #expect(throws: TLSError.handshakeFailed("certificate verify failed: hostname mismatch")) {
            try link.handshake()
        }
        // The client's alert reaches the server, whose handshake fails with it.
        link.shuttle()
        #expect(throws: TLSError.handshakeFailed("sslv3 alert bad certificate")) { try link.server.handshake() }
    }

    @Test(arguments: GeneratedPair.addresses)
    func anIPLiteralIsMatchedAgainstTheCertificatesAddresses(address: String) throws {
        let link = try link(serverName: address)
        #expect(try link.handshake())
        // RFC 6066 §3: no SNI for an address.
        #expect(link.server.requestedServerName == nil)
    }

    @Test func anAddressOutsideTheCertificateIsRefused() throws {
        #expect(throws: TLSError.handshakeFailed("certificate verify failed: IP address mismatch")) {
            try link(serverName: "127.0.0.2").handshake()
        }
    }

    @Test func plainHTTPSentToTheServerFailsItsHandshake() throws {
        let server = try TLSConnection(server: pair.serverContext())
        #expect(try server.handshake() == .wantRead)
        #expect(server.pendingCiphertext == 0)  // a server waits for the ClientHello
        Array("GET / HTTP/1.1\r\nHost: gate.test\r\n\r\n".utf8).withUnsafeBytes { _ = server.receiveCiphertext($0) }
        #expect(throws: TLSError.handshakeFailed("http request")) { try server.handshake() }
    }

    @Test func endOfStreamBeforeTheClientHelloIsPeerClosed() throws {
        let server = try TLSConnection(server: pair.serverContext())
        server.receiveEndOfStream()
        #expect(throws: TLSError.peerClosed) { try server.handshake() }
    }
}
