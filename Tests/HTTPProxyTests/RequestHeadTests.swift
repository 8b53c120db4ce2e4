@testable import HTTPProxy
import Testing

@Suite struct RequestHeadTests {
    private func parse(_ text: String) throws(ProxyError) -> RequestHead { try RequestHead(Array(text.utf8)) }

    @Test func readsTheRequestLineAndFields() throws {
        let head = try parse("GET http://example.org/a?b=1 HTTP/1.1\r\nHost: example.org\r\nX-Two:  spaced value \t\r\n\r\n")
        #expect(head.method == "GET")
        #expect(head.target == "http://example.org/a?b=1")
        #expect(head.minorVersion == 1)
        #expect(head.fields.first("host") == "example.org")
        #expect(head.fields.first("X-TWO") == "spaced value", "names ignore case; OWS trimmed")
        #expect(head.keepAlive)
    }

    @Test func acceptsBareLineFeeds() throws {
        let head = try parse("CONNECT example.org:443 HTTP/1.0\nHost: x\n\n")
        #expect(head.isConnect)
        #expect(head.minorVersion == 0)
        #expect(!head.keepAlive, "HTTP/1.0 closes unless it asks for keep-alive")
    }

    @Test(arguments: [
        "GET  / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1 \r\n\r\n", "GET /\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n", "GET / HTTP/2.0\r\n\r\n",
        "GET / http/1.1\r\n\r\n", " GET / HTTP/1.1\r\n\r\n", "GET /a b HTTP/1.1\r\n\r\n", "\r\n\r\n", "GET \u{7f} HTTP/1.1\r\n\r\n",
    ])
    func malformedRequestLinesAre400(_ text: String) {
        #expect(throws: ProxyError.malformedRequestLine) { try parse(text) }
        #expect(ProxyError.malformedRequestLine.status == 400)
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\nHost : x\r\n\r\n", "GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
        "GET / HTTP/1.1\r\n: empty-name\r\n\r\n", "GET / HTTP/1.1\r\nBad\u{1}: x\r\n\r\n", "GET / HTTP/1.1\r\nX: a\u{0}b\r\n\r\n",
        "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",
    ])
    func malformedFieldsAreRefused(_ text: String) {
        #expect(throws: ProxyError.self) { try parse(text) }
    }

    @Test func connectionTokensDecideKeepAlive() throws {
        #expect(try !parse("GET / HTTP/1.1\r\nConnection: Upgrade, close\r\n\r\n").keepAlive)
        #expect(try parse("GET / HTTP/1.0\r\nProxy-Connection: keep-alive\r\n\r\n").keepAlive)
        #expect(try parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keepAlive)
    }

    @Test func bodyFramingFollowsRFC9112() throws {
        #expect(try parse("GET / HTTP/1.1\r\n\r\n").bodyFraming() == .length(0))
        #expect(try parse("POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n").bodyFraming() == .length(12))
        #expect(try parse("POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n").bodyFraming() == .length(5))
        #expect(try parse("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").bodyFraming() == .chunked)
        #expect(throws: ProxyError.badContentLength) { try parse("POST / HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n").bodyFraming() }
        #expect(throws: ProxyError.badContentLength) { try parse("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n").bodyFraming() }
        #expect(throws: ProxyError.badContentLength) { try parse("POST / HTTP/1.1\r\nContent-Length: +1\r\n\r\n").bodyFraming() }
        #expect(throws: ProxyError.badTransferEncoding) {
            try parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n").bodyFraming()
        }
        #expect(throws: ProxyError.badTransferEncoding) { try parse("POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n").bodyFraming() }
    }

    @Test func findsTheEndOfAHeadAcrossReads() {
        var buffer = ByteBufferText.make("GET / HTTP/1.1\r\nHost: x\r")
        #expect(HTTPSyntax.headEnd(in: buffer, from: buffer.readerIndex) == nil)
        buffer.writeString("\n\r")
        #expect(HTTPSyntax.headEnd(in: buffer, from: buffer.readerIndex) == nil)
        buffer.writeString("\nBODY")
        #expect(HTTPSyntax.headEnd(in: buffer, from: buffer.readerIndex + 20) == 27)
        let bare = ByteBufferText.make("GET / HTTP/1.1\nA: b\n\nrest")
        #expect(HTTPSyntax.headEnd(in: bare, from: 0) == 21)
    }
}

import EventLoop

enum ByteBufferText {
    static func make(_ text: String) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeString(text)
        return buffer
    }
}
