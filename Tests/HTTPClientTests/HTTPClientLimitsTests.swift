import HTTPClient
import TestSupport
import Testing

/// Hostile or broken responses: too large, malformed; and requests the client refuses.
@Suite(.blocking) struct HTTPClientLimitsTests {
    @Test func anAnnouncedBodyOverTheLimitFailsBeforeReadingIt() throws {
        let server = try rawServer("HTTP/1.1 200 OK\r\nContent-Length: 5000000\r\n\r\n")
        #expect(throws: HTTPError.responseTooLarge(limit: 4 << 20)) { try client().send(try get(server.origin)) }
    }

    @Test func aChunkedBodyGrowingOverTheLimitFails() throws {
        let body = [UInt8](repeating: UInt8(ascii: "a"), count: 3000)
        let server = try TestHTTPServer { _ in
            .respond(.init(status: 200, body: body, framing: .chunked(chunkSize: 1000)))
        }
        #expect(throws: HTTPError.responseTooLarge(limit: 2500)) {
            try client(maxResponseBytes: 2500).send(try get(server.origin))
        }
        #expect(try client(maxResponseBytes: 3000).send(try get(server.origin)).body == body)
    }

    @Test func aCloseDelimitedBodyOverTheLimitFails() throws {
        let body = [UInt8](repeating: UInt8(ascii: "b"), count: 70_000)
        let server = try TestHTTPServer { _ in .respond(.init(status: 200, body: body, framing: .closeDelimited)) }
        #expect(throws: HTTPError.responseTooLarge(limit: 65_536)) {
            try client(maxResponseBytes: 65_536).send(try get(server.origin))
        }
    }

    @Test func aLargeBodyUnderTheLimitArrivesWhole() throws {
        let body = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let server = try TestHTTPServer { _ in .respond(.init(status: 200, body: body, framing: .contentLength)) }
        #expect(try client().send(try get(server.origin)).body == body)
    }

    @Test(arguments: [
        ("HTTP/1.1 2000 OK\r\n\r\n", "bad status line \"HTTP/1.1 2000 OK\""),
        ("HTTP/2 200\r\n\r\n", "bad status line \"HTTP/2 200\""),
        ("SSH-2.0-OpenSSH_9.2\r\n\r\n", "bad status line \"SSH-2.0-OpenSSH_9.2\""),
        ("HTTP/1.1 099 Low\r\n\r\n", "status code 99 out of range"),
        ("HTTP/1.1 600 High\r\n\r\n", "status code 600 out of range"),
        ("HTTP/1.2 200 OK\r\n\r\n", "bad status line \"HTTP/1.2 200 OK\""),
        ("HTTP/1.1 200 OK\r\nBad Header: x\r\n\r\n", "header line 1: the field name is not a token"),
        ("HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n", "folded header line 2 (obsolete line folding)"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n", "bad Content-Length"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc", "bad Content-Length"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "unsupported Transfer-Encoding gzip, chunked"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", "chunk data longer than its size"),
        ("HTTP/1.1 101 Switching Protocols\r\n\r\n", "unexpected 101 Switching Protocols"),
    ])
    func malformedResponsesAreNamed(response: String, why: String) throws {
        let server = try rawServer(response, close: true)
        #expect(throws: HTTPError.malformedResponse(why)) { try client().send(try get(server.origin)) }
    }

    @Test func anEndlessHeaderSectionIsCutAt64KiB() throws {
        let server = try rawServer("HTTP/1.1 200 OK\r\n" + String(repeating: "X-Filler: 0123456789\r\n", count: 4000))
        #expect(throws: HTTPError.malformedResponse("header section over 64 KiB")) {
            try client().send(try get(server.origin))
        }
    }

    @Test func aTruncatedResponseIsClosed() throws {
        let server = try rawServer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", close: true)
        #expect(throws: HTTPError.closed) { try client().send(try get(server.origin)) }
    }

    @Test func headerValuesWithLineBreaksAreRefusedWithoutShowingTheValue() throws {
        let request = HTTPRequest(
            url: try HTTPURL("http://127.0.0.1:9/"), headers: [("X-Device-Key", "secret\r\nX-Evil: 1")])
        #expect(throws: HTTPError.invalidRequest("the value of header X-Device-Key holds a line break or NUL")) {
            try client().send(request)
        }
        #expect(throws: HTTPError.invalidRequest("method \"GET /\" is not a token")) {
            try client().send(HTTPRequest(method: "GET /", url: try HTTPURL("http://127.0.0.1:9/")))
        }
        #expect(throws: HTTPError.invalidRequest("header name \"Bad Name\" is not a token")) {
            try client().send(HTTPRequest(url: try HTTPURL("http://127.0.0.1:9/"), headers: [("Bad Name", "v")]))
        }
    }

    @Test func aRequestPrintsWithoutItsHeaderValues() throws {
        let key = String(repeating: "ab", count: 32)
        let request = HTTPRequest(
            method: "POST", url: try HTTPURL("https://h/api/v1/device/ack"),
            headers: [("X-Device-Key", key)], body: bytes("{\"version\":3}"))
        var dumped = ""
        dump(request, to: &dumped)
        for text in [String(describing: request), String(reflecting: request), dumped, "\(request)"] {
            #expect(!text.contains(key))
            #expect(text.contains("X-Device-Key") || text.contains("headerNames"))
        }
        #expect(
            String(describing: request) == "POST https://h/api/v1/device/ack [headers: X-Device-Key] (13 body bytes)")
    }
}
