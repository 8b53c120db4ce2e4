import HTTP1
import Testing

@Suite struct BodyFramingTests {
    private func request(_ fields: String) throws(HTTP1Error) -> BodyFraming {
        try RequestHead(Array("POST / HTTP/1.1\r\n\(fields)\r\n".utf8)).bodyFraming()
    }

    private func response(_ text: String, method: String = "GET") throws(HTTP1Error) -> BodyFraming {
        try ResponseHead(Array(text.utf8)).bodyFraming(requestMethod: method)
    }

    @Test func requestFramingFollowsRFC9112() throws {
        #expect(try request("") == .length(0))
        #expect(try request("Content-Length: 12\r\n") == .length(12))
        #expect(try request("Content-Length: 5, 5\r\nContent-Length: 5\r\n") == .length(5))
        #expect(try request("Content-Length: 000000000000000007\r\n") == .length(7), "18 digits")
        #expect(try request("Transfer-Encoding: gzip, chunked\r\n") == .chunked)
        #expect(try request("Transfer-Encoding: gzip\r\nTransfer-Encoding: Chunked\r\n") == .chunked, "across fields")
        #expect(
            try request("Transfer-Encoding: ,\r\nContent-Length: 2\r\n") == .length(2), "an empty list is no coding")
    }

    @Test(arguments: ["5, 6", "-1", "+1", "12x", "", "5,", "0x10", "1 2", "1234567890123456789"])
    func badContentLengths(_ value: String) {
        #expect(throws: HTTP1Error.badContentLength) { try request("Content-Length: \(value)\r\n") }
        #expect(throws: HTTP1Error.badContentLength) {
            try response("HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\n")
        }
    }

    @Test func disagreeingContentLengthFieldsAreRefused() {
        #expect(throws: HTTP1Error.badContentLength) { try request("Content-Length: 2\r\nContent-Length: 3\r\n") }
    }

    @Test func requestTransferCodingsThatCannotBeFramedAreRefused() {
        #expect(throws: HTTP1Error.transferEncodingWithContentLength) {
            try request("Transfer-Encoding: chunked\r\nContent-Length: 3\r\n")
        }
        #expect(throws: HTTP1Error.transferEncodingWithContentLength) {
            try request("Content-Length: x\r\nTransfer-Encoding: chunked\r\n")
        }
        #expect(throws: HTTP1Error.unsupportedTransferCoding("gzip")) { try request("Transfer-Encoding: gzip\r\n") }
        #expect(throws: HTTP1Error.unsupportedTransferCoding("chunked, gzip")) {
            try request("Transfer-Encoding: Chunked, GZIP\r\n")
        }
    }

    @Test func responseFramingFollowsRFC9112() throws {
        #expect(try response("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\n") == .length(3))
        #expect(try response("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\n", method: "HEAD") == .length(0))
        #expect(try response("HTTP/1.0 200 OK\r\n\r\n") == .untilClose)
        #expect(try response("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n") == .chunked)
        #expect(try response("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n") == .untilClose)
        #expect(try response("HTTP/1.1 204 No Content\r\n\r\n") == .length(0))
        #expect(try response("HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n") == .length(0))
        #expect(try response("HTTP/1.1 103 Early Hints\r\n\r\n") == .length(0))
        #expect(try response("HTTP/1.1 204 No Content\r\nContent-Length: x\r\n\r\n") == .length(0), "never read")
    }

    @Test func aResponseWithBothFramingsIsReadChunkedAndFlagged() throws {
        let both = try ResponseHead(
            Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n".utf8))
        #expect(try both.bodyFraming(requestMethod: "GET") == .chunked)
        #expect(both.hasConflictingFraming)
        let one = try ResponseHead(Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n".utf8))
        #expect(!one.hasConflictingFraming)
    }

    @Test func transferCodingsAreCountedWithoutAllocating() throws {
        let head = try ResponseHead(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n".utf8))
        #expect(head.fields.transferCodings == TransferCodings(count: 2, lastIsChunked: true))
        #expect(!head.fields.transferCodings.isChunkedOnly)
        #expect(throws: HTTP1Error.unsupportedTransferCoding("gzip, chunked")) {
            try head.bodyFraming(requestMethod: "GET", chunkedOnly: true)
        }
        #expect(try head.bodyFraming(requestMethod: "GET") == .chunked)
        let plain = try ResponseHead(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
        #expect(try plain.bodyFraming(requestMethod: "GET", chunkedOnly: true) == .chunked)
    }
}
