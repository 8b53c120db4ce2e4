import HTTPClient
import TestSupport
import Testing

/// The shared table of malformed heads through the real client: a raw server on loopback
/// answers the request with one malformed response head and keeps the connection open,
/// and the client fails with a malformed response naming what HTTP1 found (not a timeout,
/// not a close, not a trap).
@Suite(.blocking) struct MalformedResponseTests {
    @Test(arguments: MalformedHeads.responses)
    func eachFailsWithItsName(_ head: MalformedHead) throws {
        let bytes = try #require(head.response)
        let server = try TestHTTPServer { _ in .raw(bytes, close: false) }
        let expected = HTTPError.malformedResponse(head.expected(headLimit: 65_536).description)
        #expect(throws: expected) { try client().send(try get(server.origin)) }
    }
}
