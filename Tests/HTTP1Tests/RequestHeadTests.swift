import HTTP1
import Testing

@Suite struct RequestHeadTests {
    private func parse(_ text: String) throws(HTTP1Error) -> RequestHead { try RequestHead(Array(text.utf8)) }

    @Test func readsTheRequestLineAndFields() throws {
        let head = try parse(
            "GET http://example.org/a?b=1 HTTP/1.1\r\nHost: example.org\r\nX-Two:  spaced value \t\r\n\r\n")
        #expect(head.method == "GET")
        #expect(head.target == "http://example.org/a?b=1")
        #expect(head.minorVersion == 1)
        #expect(head.fields.first("host") == "example.org")
        #expect(head.fields.first("X-TWO") == "spaced value", "names ignore case; OWS trimmed")
        #expect(head.fields.count == 2)
        #expect(head.keepAlive)
    }

    @Test func acceptsBareLineFeeds() throws {
        let head = try parse("CONNECT example.org:443 HTTP/1.0\nHost: x\n\n")
        #expect(head.isConnect)
        #expect(head.minorVersion == 0)
        #expect(head.fields.first("host") == "x")
        #expect(!head.keepAlive, "HTTP/1.0 closes unless it asks for keep-alive")
    }

    @Test func aHigherMinorVersionIsRead() throws {
        #expect(try parse("GET / HTTP/1.2\r\n\r\n").minorVersion == 2)
    }

    @Test(arguments: [
        "GET  / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1 \r\n\r\n", "GET /\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n",
        "GET / http/1.1\r\n\r\n", " GET / HTTP/1.1\r\n\r\n", "GET /a b HTTP/1.1\r\n\r\n", "\r\n\r\n",
        "GET \u{7f} HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\r\n\r\n", "GET /\u{0} HTTP/1.1\r\n\r\n", "GET / HTTP/1.\r\n\r\n", "GET / HTTP/1.10\r\n\r\n",
    ])
    func malformedRequestLines(_ text: String) {
        #expect(throws: HTTP1Error.malformedRequestLine) { try parse(text) }
    }

    /// A well-formed version that is not 1.x: 505, not 400 (RFC 9110 §15.6.6).
    @Test(arguments: ["HTTP/2.0", "HTTP/0.9", "HTTP/3.1"])
    func otherVersionsAreNotSupported(_ version: String) {
        #expect(throws: HTTP1Error.unsupportedVersion(version)) { try parse("GET / \(version)\r\n\r\n") }
    }

    /// Max-Forwards as a number of hops; anything else counts as absent.
    @Test func maxForwardsIsReadAsANumber() throws {
        #expect(try parse("TRACE / HTTP/1.1\r\nMax-Forwards: 0\r\n\r\n").maxForwards == 0)
        #expect(try parse("OPTIONS * HTTP/1.1\r\nMax-Forwards: 12\r\n\r\n").maxForwards == 12)
        #expect(try parse("TRACE / HTTP/1.1\r\nMax-Forwards: -1\r\n\r\n").maxForwards == nil)
        #expect(try parse("TRACE / HTTP/1.1\r\n\r\n").maxForwards == nil)
    }

    @Test func theRequestLineIsCheckedBeforeTheFields() {
        #expect(throws: HTTP1Error.malformedRequestLine) { try parse("GET  / HTTP/1.1\r\n folded\r\n\r\n") }
    }

    @Test func aHeadWithoutItsEmptyLineIsIncomplete() {
        #expect(throws: HTTP1Error.incompleteHead) { try parse("GET / HTTP/1.1\r\nHost: x\r\n") }
        #expect(throws: HTTP1Error.incompleteHead) { try parse("GET / HTTP/1.1") }
    }

    @Test func connectionTokensDecideKeepAlive() throws {
        #expect(try !parse("GET / HTTP/1.1\r\nConnection: Upgrade, close\r\n\r\n").keepAlive)
        #expect(try !parse("GET / HTTP/1.1\r\nProxy-Connection: close\r\n\r\n").keepAlive)
        #expect(try parse("GET / HTTP/1.0\r\nProxy-Connection: keep-alive\r\n\r\n").keepAlive)
        #expect(try parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keepAlive)
        #expect(try !parse("GET / HTTP/1.0\r\nConnection: keep-alive-ish\r\n\r\n").keepAlive, "members, not substrings")
        #expect(try parse("GET / HTTP/1.1\r\nConnection: closed\r\n\r\n").keepAlive)
    }
}
