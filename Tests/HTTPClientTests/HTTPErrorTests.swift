import Glibc
import HTTPClient
import SystemIO
import TLS
import TestSupport
import Testing

/// What an error reads like in a log line.
@Suite(.blocking) struct HTTPErrorTests {
    @Test func descriptionsNameTheProblem() {
        let cases: [(HTTPError, String)] = [
            (.invalidURL("\"x\": no host"), "invalid URL \"x\": no host"),
            (
                .resolve(host: "api.test", reason: "Name or service not known"),
                "cannot resolve api.test: Name or service not known"
            ),
            (
                .connect(SystemError("connect", errno: ECONNREFUSED, subject: "127.0.0.1:1")),
                "connect(127.0.0.1:1): Connection refused"
            ),
            (
                .tls(.handshakeFailed("certificate verify failed: hostname mismatch")),
                "TLS: certificate verify failed: hostname mismatch"
            ),
            (
                .io(SystemError("recv", errno: ECONNRESET, subject: "127.0.0.1:1")),
                "recv(127.0.0.1:1): Connection reset by peer"
            ),
            (.timeout(.connect), "timed out connecting"),
            (.timeout(.tlsHandshake), "timed out in the TLS handshake"),
            (.timeout(.send), "timed out sending the request"),
            (.timeout(.response), "timed out waiting for the response"),
            (.malformedResponse("bad Content-Length"), "malformed response: bad Content-Length"),
            (.responseTooLarge(limit: 4_194_304), "response larger than 4194304 bytes"),
            (.closed, "connection closed before a complete response"),
        ]
        for (error, text) in cases { #expect(error.description == text) }
    }
}
