import HTTP1
import Testing

@Suite struct HeadScannerTests {
    private func scan(_ scanner: inout HeadScanner, _ text: String) throws -> Int? {
        try Array(text.utf8).withUnsafeBytes { bytes in try scanner.scan(bytes) }
    }

    @Test func findsTheEndOfAHeadAcrossReads() throws {
        var scanner = HeadScanner(limit: 1000)
        #expect(try scan(&scanner, "GET / HTTP/1.1\r\nHost: x\r") == nil)
        #expect(scanner.scanned == 24)
        #expect(try scan(&scanner, "GET / HTTP/1.1\r\nHost: x\r\n\r") == nil)
        #expect(try scan(&scanner, "GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY") == 27)
        #expect(scanner.scanned == 0, "ready for the next head")
        #expect(try scan(&scanner, "GET / HTTP/1.1\nA: b\n\nrest") == 21)
        #expect(try scan(&scanner, "GET / HTTP/1.1\nA: b\n\r\nrest") == 22)
    }

    @Test func aCarriageReturnAloneDoesNotEndTheHead() throws {
        var scanner = HeadScanner(limit: 1000)
        #expect(try scan(&scanner, "GET / HTTP/1.1\r\nA: b\r\r\r\n") == nil)
    }

    @Test func theLimitCoversTheEmptyLine() throws {
        let head = "GET / HTTP/1.1\r\nA: b\r\n\r\n"
        var exact = HeadScanner(limit: head.utf8.count)
        #expect(try scan(&exact, head + "more") == head.utf8.count)
        var short = HeadScanner(limit: head.utf8.count - 1)
        #expect(throws: HTTP1Error.headTooLarge(limit: head.utf8.count - 1)) { try scan(&short, head) }
    }

    /// Over the limit: the start line alone (a URI too long, 414) or the head (431).
    @Test func aHeadNotEndedWithinTheLimitIsRefusedAtOnce() throws {
        var scanner = HeadScanner(limit: 16)
        #expect(try scan(&scanner, String(repeating: "a", count: 16)) == nil)
        #expect(throws: HTTP1Error.startLineTooLong(limit: 16)) {
            try scan(&scanner, String(repeating: "a", count: 17))
        }
        var fields = HeadScanner(limit: 16)
        #expect(try scan(&fields, "GET / HTTP/1.1\r\n") == nil)
        #expect(fields.startLineEnd == 16)
        #expect(throws: HTTP1Error.headTooLarge(limit: 16)) { try scan(&fields, "GET / HTTP/1.1\r\nA") }
        #expect(HTTP1Error.headTooLarge(limit: 65_536).description == "header section over 64 KiB")
        #expect(HTTP1Error.headTooLarge(limit: 1000).description == "header section over 1000 bytes")
    }

    @Test func resetStartsOver() throws {
        var scanner = HeadScanner(limit: 100)
        #expect(try scan(&scanner, "GET / HTTP/1.1\r\n") == nil)
        scanner.reset()
        #expect(scanner.scanned == 0)
        #expect(try scan(&scanner, "\n\n") == 2)
    }
}
