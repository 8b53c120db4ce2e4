import EventLoop
@testable import HTTPProxy
import Testing

@Suite struct ResponseHeadTests {
    private func parse(_ text: String) throws(ProxyError) -> ResponseHead { try ResponseHead(Array(text.utf8)) }

    @Test func readsTheStatusLine() throws {
        let head = try parse("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\n")
        #expect(head.status == 404)
        #expect(head.reasonPhrase == "Not Found")
        #expect(try head.bodyFraming(requestMethod: "GET") == .length(3))
        #expect(try head.bodyFraming(requestMethod: "HEAD") == .length(0))
        #expect(try parse("HTTP/1.1 200\r\n\r\n").reasonPhrase == "", "an absent reason phrase is fine")
    }

    @Test func framingWithoutALengthRunsUntilClose() throws {
        #expect(try parse("HTTP/1.0 200 OK\r\n\r\n").bodyFraming(requestMethod: "GET") == .untilClose)
        #expect(try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n").bodyFraming(requestMethod: "GET") == .chunked)
        #expect(try parse("HTTP/1.1 204 No Content\r\n\r\n").bodyFraming(requestMethod: "GET") == .length(0))
        #expect(try parse("HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n").bodyFraming(requestMethod: "GET") == .length(0))
        #expect(try !parse("HTTP/1.0 200 OK\r\n\r\n").keepAlive)
        #expect(try !parse("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n").keepAlive)
    }

    @Test(arguments: ["HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 abc OK\r\n\r\n", "ICY 200 OK\r\n\r\n",
                      "HTTP/1.1 099 x\r\n\r\n", "garbage\r\n\r\n"])
    func malformedStatusLines(_ text: String) {
        #expect(throws: ProxyError.malformedStatusLine) { try parse(text) }
    }

    @Test func theForwardedResponseLosesHopByHopFieldsAndGainsVia() throws {
        let head = try parse("""
            HTTP/1.1 200 OK\r\nConnection: close, X-Secret\r\nKeep-Alive: timeout=5\r\nX-Secret: 1\r\nContent-Length: 2\r\n\
            Proxy-Authenticate: Basic\r\nUpgrade: h2c\r\nX-Kept: yes\r\n\r\n
            """)
        var out = ByteBuffer()
        ForwardedHead.response(head, close: true, keepAliveFor10: false, dropTransferEncoding: false, to: &out)
        let text = out.readString(length: out.readableBytes) ?? ""
        #expect(text == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Kept: yes\r\nVia: 1.1 phosra-gate\r\nConnection: close\r\n\r\n")
    }
}
