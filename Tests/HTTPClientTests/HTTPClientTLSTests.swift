import HTTPClient
import TLS
import TestSupport
import Testing

/// HTTPS against a test server with the test CA's certificate for `dot.test` and 127.0.0.1:
/// verification is always on, and every failure names its reason.
@Suite(.blocking) struct HTTPClientTLSTests {
    let certificates: TestCertificates
    let server: TestHTTPServer

    init() throws {
        certificates = try TestCertificates()
        let context = try TestTLSServerContext(certificates)
        server = try TestHTTPServer(tls: context) { request in
            .respond(.init(status: 200, headers: [("Content-Type", "text/plain")], text: "secure \(request.target)"))
        }
    }

    @Test func theTestCAAndTheCertificatesNameSucceedWithSNI() throws {
        let http = client(tls: try .init(certificates.caFile), resolver: .fixed(["dot.test": ["127.0.0.1"]]))
        let response = try http.send(try get("https://dot.test:\(server.port)/a"))
        #expect(response.status == 200 && response.bodyText == "secure /a")
        // Kept alive over TLS.
        #expect(try http.send(try get("https://dot.test:\(server.port)/b")).bodyText == "secure /b")
        #expect(http.connectionsOpened == 1 && server.connectionsAccepted == 1)
    }

    @Test func anIPLiteralIsCheckedAgainstTheCertificatesAddresses() throws {
        let http = client(tls: try .init(certificates.caFile))
        #expect(try http.send(try get("https://127.0.0.1:\(server.port)/ip")).bodyText == "secure /ip")
    }

    @Test func theSystemStoreAloneRejectsTheTestCA() throws {
        let expected = HTTPError.tls(
            .handshakeFailed("certificate verify failed: unable to get local issuer certificate"))
        #expect(throws: expected) { try client(tls: try .init(nil)).send(try get("https://127.0.0.1:\(server.port)/")) }
        // No context at all means the system store too, never "no verification".
        #expect(throws: expected) { try client().send(try get("https://127.0.0.1:\(server.port)/")) }
        #expect(expected.description == "TLS: certificate verify failed: unable to get local issuer certificate")
    }

    @Test func anotherCAIsRejected() throws {
        #expect(
            throws: HTTPError.tls(.handshakeFailed("certificate verify failed: unable to get local issuer certificate"))
        ) {
            try client(tls: try .init(certificates.otherCAFile)).send(try get("https://127.0.0.1:\(server.port)/"))
        }
    }

    @Test func aWrongHostNameIsRejected() throws {
        // localhost reaches the server, but the certificate is for dot.test and 127.0.0.1.
        #expect(throws: HTTPError.tls(.handshakeFailed("certificate verify failed: hostname mismatch"))) {
            try client(tls: try .init(certificates.caFile)).send(try get("https://localhost:\(server.port)/"))
        }
        let resolver = HostResolver.fixed(["other.test": ["127.0.0.1"]])
        #expect(throws: HTTPError.tls(.handshakeFailed("certificate verify failed: hostname mismatch"))) {
            try client(tls: try .init(certificates.caFile), resolver: resolver).send(
                try get("https://other.test:\(server.port)/"))
        }
    }

    @Test func plainHTTPToATLSPortAndTLSToAPlainPortFail() throws {
        // The TLS server cannot read a plain request as a ClientHello and hangs up.
        #expect(throws: HTTPError.closed) { try client().send(try get("http://127.0.0.1:\(server.port)/")) }
        // A plain server waits for a request head that never comes, then closes.
        let plain = try TestHTTPServer(idleTimeout: .milliseconds(200)) { _ in .respond(.init(status: 200, text: "ok"))
        }
        #expect(throws: HTTPError.tls(.peerClosed)) {
            try client(tls: try .init(certificates.caFile)).send(try get("https://127.0.0.1:\(plain.port)/"))
        }
    }

    @Test func aKeptTLSConnectionTheServerClosedIsReplaced() throws {
        // The server sends close_notify when its idle timeout passes.
        let tls = try TestTLSServerContext(certificates)
        let quick = try TestHTTPServer(tls: tls, idleTimeout: .milliseconds(100)) { _ in
            .respond(.init(status: 200, text: "ok"))
        }
        let http = client(tls: try .init(certificates.caFile))
        #expect(try http.send(try get("https://127.0.0.1:\(quick.port)/")).bodyText == "ok")
        #expect(waitUntil { quick.openConnections == 0 }, "the server closed the idle connection")
        #expect(try http.send(try get("https://127.0.0.1:\(quick.port)/")).bodyText == "ok")
        #expect(http.connectionsOpened == 2)
    }

    @Test func aServerThatNeverSpeaksTLSTimesOutInTheHandshake() throws {
        let silent = try TestHTTPServer { _ in .hang }
        let http = client(tls: try .init(certificates.caFile), connectTimeout: .milliseconds(300))
        #expect(throws: HTTPError.timeout(.tlsHandshake)) {
            try http.send(try get("https://127.0.0.1:\(silent.port)/"))
        }
    }

    @Test func aLargeChunkedBodyOverTLS() throws {
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let big = try TestHTTPServer(tls: try TestTLSServerContext(certificates)) { _ in
            .respond(.init(status: 200, body: body, framing: .chunked(chunkSize: 8192)))
        }
        let response = try client(tls: try .init(certificates.caFile)).send(try get("https://127.0.0.1:\(big.port)/"))
        #expect(response.body == body)
    }

    @Test func aPOSTBodyLargerThanOneRecordIsSentWhole() throws {
        let seen = Recorder<Int>()
        let echo = try TestHTTPServer(tls: try TestTLSServerContext(certificates)) { request in
            seen.append(request.body.count)
            return .respond(.init(status: 202, text: "{\"status\":\"accepted\"}\n"))
        }
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 200_000)
        let response = try client(tls: try .init(certificates.caFile))
            .send(HTTPRequest(method: "POST", url: try HTTPURL("https://127.0.0.1:\(echo.port)/r"), body: body))
        #expect(response.status == 202 && seen.values == [200_000])
    }
}
