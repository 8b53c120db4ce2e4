import EventLoop
import Foundation
import Glibc
import SystemIO
import TLS
import TestSupport
import Testing

/// The server side over a real socket on 127.0.0.1 against real clients: curl and
/// `openssl s_client` run as child processes while the test's thread serves one
/// connection with `TLSConnection(server:)`, poll(2) standing in for the event loop.
@Suite(.blocking) struct TLSServerSocketTests {
    let pair: GeneratedPair

    init() throws { pair = try GeneratedPair() }

    @Test func curlFetchesAPageAndTheServerSeesItsSNI() throws {
        let server = try OneConnectionServer()
        let (curl, served) = try server.run(
            context: pair.serverContext(),
            client: {
                try Curl.run([
                    "--cacert", pair.certificateFile, "--resolve", "gate.test:\(server.port):127.0.0.1",
                    "https://gate.test:\(server.port)/page",
                ])
            })
        #expect(curl.exitCode == 0 && curl.status == 200 && curl.body == "hello", "\(curl)")
        #expect(served.requestedServerName == "gate.test")
        #expect(served.request.hasPrefix("GET /page HTTP/1.1\r\n"), "\(served.request)")
    }

    @Test func overTLS12TheKeyExchangeIsECDHEWithAnAEADCipher() throws {
        let server = try OneConnectionServer()
        let (curl, _) = try server.run(
            context: pair.serverContext(),
            client: {
                try Curl.run([
                    "-v", "--tls-max", "1.2", "--cacert", pair.certificateFile, "https://127.0.0.1:\(server.port)/",
                ])
            })
        #expect(curl.status == 200, "\(curl)")
        let negotiated = curl.stderr.split(separator: "\n").first { $0.contains("SSL connection using") } ?? ""
        #expect(negotiated.contains("TLSv1.2 / ECDHE-ECDSA-"), "\(negotiated)")
        #expect(negotiated.contains("GCM") || negotiated.contains("CHACHA20"), "\(negotiated)")
    }

    @Test func aClientOfferingOnlyCBCCiphersIsRefused() throws {
        let server = try OneConnectionServer()
        let curl = Shared<CurlResult?>(nil)
        #expect(throws: TLSError.handshakeFailed("no shared cipher")) {
            _ = try server.run(
                context: pair.serverContext(),
                client: {
                    let result = try Curl.run([
                        "--tls-max", "1.2", "--ciphers", "ECDHE-ECDSA-AES128-SHA256", "--cacert", pair.certificateFile,
                        "https://127.0.0.1:\(server.port)/",
                    ])
                    curl.update { $0 = result }
                    return result
                })
        }
        #expect(curl.value?.exitCode == 35, "\(String(describing: curl.value))")  // CURLE_SSL_CONNECT_ERROR
    }

    @Test func aCAsChainIsSentWholeAndNoSessionTicketFollows() throws {
        let pki = try TestPKI()
        let chain = pair.directory.path("chain.pem")
        try Files.writeAtomically(chain, try Files.read(pki.serverCertificate) + Files.read(pki.caFile))
        let server = try OneConnectionServer()
        let (sClient, served) = try server.run(
            context: TLSServerContext(certificateFile: chain, keyFile: pki.serverKey),
            client: {
                try Program.run(
                    "/usr/bin/openssl",
                    [
                        "s_client", "-connect", "127.0.0.1:\(server.port)", "-servername", TestPKI.serverName,
                        "-CAfile", pki.caFile, "-verify_return_error", "-showcerts", "-ign_eof", "-crlf",
                    ],
                    stdin: "GET / HTTP/1.1\n\n")
            })
        #expect(sClient.status == 0, "\(sClient.stderr)")
        #expect(served.requestedServerName == TestPKI.serverName)
        #expect(sClient.stdout.components(separatedBy: "-----BEGIN CERTIFICATE-----").count == 3, "\(sClient.stdout)")
        #expect(sClient.stdout.contains("Verify return code: 0 (ok)"))
        #expect(sClient.stdout.contains("Protocol  : TLSv1.3") || sClient.stdout.contains("New, TLSv1.3"))
        #expect(!sClient.stdout.contains("Session Ticket"), "\(sClient.stdout)")
        #expect(sClient.stdout.contains("hello"))
    }
}

/// A listener on 127.0.0.1 that serves one TLS connection: the handshake, one request
/// answered with "hello", close_notify.
struct OneConnectionServer {
    let port: UInt16
    let listener: Socket

    /// What the server saw.
    struct Served {
        let requestedServerName: String?
        let request: String
    }

    init() throws {
        port = FreePort.tcpAndUDP()
        listener = try Socket.listen(on: SocketAddress(host: "127.0.0.1", port: port))
    }

    /// Runs `client` on another thread while this one serves.
    func run<Output: Sendable>(
        context: TLSServerContext, client: @escaping @Sendable () throws -> Output
    ) throws -> (Output, Served) {
        let output = Shared<Result<Output, any Error>?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            let result = Result { try client() }
            output.update { $0 = result }
            finished.signal()
        }.start()
        defer { listener.close() }
        let served: Served
        do {
            served = try serve(context)
        } catch {
            listener.close()  // a client still connecting gives up
            finished.wait()
            throw error
        }
        finished.wait()
        return (try output.value!.get(), served)
    }

    private func serve(_ context: TLSServerContext) throws -> Served {
        try waitFor(listener, writing: false)
        guard let socket = try listener.accept() else { throw TLSError.unusable }
        defer { socket.close() }
        let connection = try TLSConnection(server: context)
        var request = ByteBuffer()
        var answered = false
        while true {
            // Read (which first completes the handshake) until OpenSSL wants more bytes.
            while !answered, case .processed = try connection.read(into: &request) {
                guard text(request).contains("\r\n\r\n") else { continue }
                let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello".utf8)
                #expect(try response.withUnsafeBytes { try connection.write($0) } == .processed(response.count))
                connection.shutdown()
                answered = true
            }
            let flushed = try connection.sendCiphertext(to: socket)
            if answered, flushed {
                return Served(
                    requestedServerName: connection.requestedServerName,
                    request: text(request))
            }
            if try waitFor(socket, writing: !flushed) {
                _ = try connection.receiveCiphertext(from: socket)
            }
        }
    }

    private func text(_ buffer: ByteBuffer) -> String {
        buffer.getString(at: buffer.readerIndex, length: buffer.readableBytes) ?? ""
    }

    /// Waits until `socket` is readable (true), or writable when `writing` (false); a
    /// silence of 10 s fails the test.
    @discardableResult
    private func waitFor(_ socket: Socket, writing: Bool) throws -> Bool {
        var entry = pollfd(fd: socket.descriptor, events: Int16(POLLIN) | (writing ? Int16(POLLOUT) : 0), revents: 0)
        guard poll(&entry, 1, 10_000) == 1 else { throw TLSError.io(SystemError("poll", errno: ETIMEDOUT)) }
        return entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0
    }
}
