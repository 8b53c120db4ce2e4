import HTTP1
import TestFixtures
import Testing

/// The shared table of malformed heads against the parser itself, read the way the proxy
/// reads a request and the client reads a response: every case refused with its name.
/// (The same table runs through the proxy and the client in their own tests.)
@Suite struct MalformedHeadsTests {
    /// A request as a server reads it: the head found within `limit`, parsed, framed.
    private func readRequest(_ bytes: [UInt8], limit: Int) throws {
        var scanner = HeadScanner(limit: limit)
        let length = try bytes.withUnsafeBytes { raw in try scanner.scan(raw) }
        _ = try RequestHead(Array(bytes.prefix(length ?? bytes.count))).bodyFraming()
    }

    /// A response as a client that sent no TE reads it.
    private func readResponse(_ bytes: [UInt8], limit: Int) throws {
        var scanner = HeadScanner(limit: limit)
        let length = try bytes.withUnsafeBytes { raw in try scanner.scan(raw) }
        _ = try ResponseHead(Array(bytes.prefix(length ?? bytes.count))).bodyFraming(
            requestMethod: "GET", chunkedOnly: true)
    }

    @Test(arguments: MalformedHeads.requests)
    func requestsAreRefusedByName(_ head: MalformedHead) throws {
        let bytes = try #require(head.request)
        #expect(throws: head.expected(headLimit: 16_384)) { try readRequest(bytes, limit: 16_384) }
    }

    @Test(arguments: MalformedHeads.responses)
    func responsesAreRefusedByName(_ head: MalformedHead) throws {
        let bytes = try #require(head.response)
        #expect(throws: head.expected(headLimit: 65_536)) { try readResponse(bytes, limit: 65_536) }
    }

    /// The table is only worth running if its heads are otherwise good: with the bad line
    /// taken out, each field case parses.
    @Test func theTemplatesAreWellFormed() throws {
        try readRequest(Array("GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n\r\n".utf8), limit: 16_384)
        try readResponse(Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n".utf8), limit: 65_536)
        #expect(MalformedHeads.requests.count >= 30 && MalformedHeads.responses.count >= 25)
    }
}
