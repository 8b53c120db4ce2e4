import HTTP1
import Testing

@Suite struct ResponseHeadTests {
    private func parse(_ text: String) throws(HTTP1Error) -> ResponseHead { try ResponseHead(Array(text.utf8)) }

    @Test func readsTheStatusLine() throws {
        let head = try parse("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\n")
        #expect(head.status == 404)
        #expect(head.minorVersion == 1)
        #expect(head.reasonPhrase == "Not Found")
        #expect(!head.isInformational)
        #expect(try parse("HTTP/1.1 200\r\n\r\n").reasonPhrase == "", "an absent reason phrase is fine")
        #expect(try parse("HTTP/1.1 200 \r\n\r\n").reasonPhrase == "")
        #expect(try parse("HTTP/1.0 200 caf\u{e9}\tok\r\n\r\n").reasonPhrase == "caf\u{e9}\tok", "obs-text and HTAB")
        #expect(try parse("HTTP/1.1 100 Continue\r\n\r\n").isInformational)
        #expect(try parse("HTTP/1.1 799 Custom\r\n\r\n").status == 799, "three digits; the class is the caller's")
    }

    @Test func bareLineFeedsAreAccepted() throws {
        let head = try parse("HTTP/1.1 204 No Content\nA: b\n\n")
        #expect(head.status == 204 && head.fields.first("a") == "b")
    }

    @Test(arguments: [
        ("HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 20 OK"), ("HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 2000 OK"),
        ("HTTP/1.1 abc OK\r\n\r\n", "HTTP/1.1 abc OK"), ("ICY 200 OK\r\n\r\n", "ICY 200 OK"),
        ("garbage\r\n\r\n", "garbage"),
        ("HTTP/2 200\r\n\r\n", "HTTP/2 200"), ("SSH-2.0-OpenSSH_9.2\r\n\r\n", "SSH-2.0-OpenSSH_9.2"),
        ("HTTP/1.1 200 O\u{1}K\r\n\r\n", "HTTP/1.1 200 O?K"), ("HTTP/1.1 200 OK\r\r\n\r\n", "HTTP/1.1 200 OK?"),
        ("HTTP/1.1  200 OK\r\n\r\n", "HTTP/1.1  200 OK"),
    ])
    func malformedStatusLinesAreQuotedPrintably(_ text: String, _ quoted: String) {
        #expect(throws: HTTP1Error.malformedStatusLine(quoted)) { try parse(text) }
    }

    @Test func aStatusLineIsQuotedAtMost60Bytes() {
        let long = String(repeating: "x", count: 100)
        #expect(throws: HTTP1Error.malformedStatusLine(String(repeating: "x", count: 60))) {
            try parse(long + "\r\n\r\n")
        }
    }

    @Test func statusCodesBelow100AreOutOfRange() {
        #expect(throws: HTTP1Error.statusOutOfRange(99)) { try parse("HTTP/1.1 099 Low\r\n\r\n") }
        #expect(throws: HTTP1Error.statusOutOfRange(0)) { try parse("HTTP/1.1 000 x\r\n\r\n") }
        #expect(HTTP1Error.statusOutOfRange(99).description == "status code 99 out of range")
    }

    @Test func keepAliveFollowsTheVersionAndConnection() throws {
        #expect(try parse("HTTP/1.1 200 OK\r\n\r\n").keepAlive)
        #expect(try !parse("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\n\r\n").keepAlive)
        #expect(try !parse("HTTP/1.0 200 OK\r\n\r\n").keepAlive)
        #expect(try parse("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n\r\n").keepAlive)
        #expect(
            try parse("HTTP/1.1 200 OK\r\nProxy-Connection: close\r\n\r\n").keepAlive,
            "only requests read Proxy-Connection")
    }
}
