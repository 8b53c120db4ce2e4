import EventLoop
import TestSupport
import Testing

@testable import HTTPClient

/// The I/O-free response reader, fed the way a slow network would: one byte at a time.
@Suite(.blocking) struct ResponseReaderTests {
    /// Feeds `text` in pieces of `step` bytes; returns the response and what was left over.
    private func parse(
        _ text: String, method: String = "GET", step: Int, limit: Int = 1 << 20
    )
        throws(HTTPError) -> (HTTPResponse?, ResponseReader, ByteBuffer)
    {
        var parser = ResponseReader(method: method, maxBodyBytes: limit)
        var buffer = ByteBuffer()
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + step, bytes.count)
            buffer.writeBytes(bytes[offset..<end])
            offset = end
            if let response = try parser.read(&buffer) { return (response, parser, buffer) }
        }
        return (nil, parser, buffer)
    }

    @Test(arguments: [1, 2, 7, 1000])
    func aChunkedResponseFedInPiecesParsesTheSame(step: Int) throws {
        let text =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n4\r\nWiki\r\n5;x=y\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nT: v\r\n\r\n"
        let (response, parser, rest) = try parse(text, step: step)
        #expect(response?.bodyText == "Wikipedia in\r\n\r\nchunks.")
        #expect(response?.headers.map(\.0) == ["Transfer-Encoding", "X-A"])
        #expect(parser.allowsReuse && rest.readableBytes == 0)
    }

    @Test func bytesAfterAResponseStayInTheBuffer() throws {
        let (response, parser, rest) = try parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1", step: 100)
        #expect(response?.bodyText == "ok" && parser.allowsReuse)
        #expect(rest.readableBytes == 8)
    }

    @Test func bareLineFeedsAreAccepted() throws {
        let (response, _, _) = try parse("HTTP/1.1 204 No Content\nA: b\n\n", step: 3)
        #expect(response?.status == 204 && response?.header("a") == "b")
    }

    @Test func aCloseDelimitedBodyCompletesOnlyAtACleanEnd() throws {
        var (response, parser, buffer) = try parse("HTTP/1.1 200 OK\r\n\r\npartial", step: 4)
        #expect(response == nil)
        _ = try parser.read(&buffer)
        var unclean = parser
        #expect(throws: HTTPError.closed) { try unclean.finish(clean: false) }
        response = try parser.finish(clean: true)
        #expect(response?.bodyText == "partial" && !parser.allowsReuse)
    }

    @Test func aResponseCutShortIsClosed() throws {
        var (_, parser, _) = try parse("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", step: 100)
        #expect(throws: HTTPError.closed) { try parser.finish(clean: true) }
    }

    @Test func reuseFollowsTheVersionAndConnectionHeader() throws {
        let cases: [(String, Bool)] = [
            ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true),
            ("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n", false),
            ("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false),
            ("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", true),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", false),
            ("HTTP/1.1 304 Not Modified\r\n\r\n", true),
        ]
        for (text, reusable) in cases {
            let (response, parser, _) = try parse(text, step: 1)
            #expect(response != nil, "\(text)")
            #expect(parser.allowsReuse == reusable, "\(text)")
        }
    }

    @Test func manySmallChunksDoNotCountAgainstTheHeaderLimit() throws {
        let chunks = String(repeating: "1\r\nx\r\n", count: 20_000)  // 120 KB of chunk lines
        let (response, _, _) = try parse(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(chunks)0\r\n\r\n", step: 4096)
        #expect(response?.body.count == 20_000)
    }

    @Test func aHEADResponseHasNoBody() throws {
        let (response, parser, _) = try parse("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", method: "HEAD", step: 5)
        #expect(response?.body.isEmpty == true && parser.allowsReuse)
    }
}
