import HTTP1
import Testing

@Suite struct BodyTrackerTests {
    /// Feeds `text` in pieces of `step` bytes; returns how many bytes belonged to the body,
    /// the tracker, and the content it handed over.
    private func run(
        _ framing: BodyFraming, _ text: String, step: Int = .max,
        limits: BodyTracker.Limits? = nil
    ) throws -> (Int, BodyTracker, String) {
        var tracker =
            try limits.map { limits throws(HTTP1Error) in try BodyTracker(framing, limits: limits) }
            ?? BodyTracker(framing)
        let bytes = Array(text.utf8)
        var used = 0
        var offset = 0
        var content: [UInt8] = []
        while offset < bytes.count {
            let end = min(bytes.count, offset + min(step, bytes.count))
            let taken = try bytes[offset..<end].withUnsafeBytes { raw in try tracker.consume(raw) { content += $0 } }
            used += taken
            if taken < end - offset { break }
            offset = end
        }
        return (used, tracker, String(decoding: content, as: UTF8.self))
    }

    @Test func aLengthEndsAfterThatManyBytes() throws {
        let (used, tracker, content) = try run(.length(5), "helloGET / HTTP/1.1")
        #expect(used == 5)
        #expect(tracker.isComplete)
        #expect(content == "hello")
        #expect(BodyTracker(.length(0)).isComplete)
    }

    @Test(arguments: [1, 2, 3, 7, 1000])
    func chunkedEndsAfterTheLastChunkAndTrailers(step: Int) throws {
        let body = "4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n"
        let (used, tracker, content) = try run(.chunked, body + "NEXT", step: step)
        #expect(used == body.utf8.count)
        #expect(tracker.isComplete)
        #expect(content == "Wikipedia in\r\n\r\nchunks.")
        #expect(tracker.contentBytes == 23)
    }

    @Test func bareLineFeedsAndWhitespaceBeforeExtensions() throws {
        let (bare, done, content) = try run(.chunked, "3\nabc\n0\n\nX")
        #expect(bare == 9)
        #expect(done.isComplete)
        #expect(content == "abc")
        let (_, spaced, text) = try run(.chunked, "3 ;a=b\r\nabc\r\n0\r\n\r\n")
        #expect(spaced.isComplete && text == "abc")
    }

    @Test func incompleteChunkedIsNotComplete() throws {
        let (used, tracker, _) = try run(.chunked, "a\r\n01234")
        #expect(used == 8)
        #expect(!tracker.isComplete)
    }

    @Test(arguments: [
        ("x\r\n", HTTP1Error.badChunkSize), ("\r\n", .badChunkSize), (" 3\r\n", .badChunkSize),
        ("+3\r\n", .badChunkSize),
        ("1234567890abcdef0\r\n", .badChunkSize), ("3\rx", .badChunkSize), ("1\r\nab", .chunkDataOverrun),
        ("1\r\nax\r\n", .chunkDataOverrun), ("1\r\na\rb", .chunkDataOverrun), ("0\r\n\rx", .malformedTrailers),
    ])
    func malformedChunkingIsNamed(_ text: String, _ error: HTTP1Error) {
        #expect(throws: error) { try run(.chunked, text) }
    }

    @Test func chunkLinesAndTrailersAreBounded() throws {
        let limits = BodyTracker.Limits(lineBytes: 16, trailerBytes: 20)
        #expect(throws: HTTP1Error.chunkLineTooLong(limit: 16)) {
            try run(.chunked, "1;" + String(repeating: "e", count: 100), step: 3, limits: limits)
        }
        #expect(
            try run(.chunked, "1;" + String(repeating: "e", count: 12) + "\r\nx\r\n0\r\n\r\n", limits: limits).1
                .isComplete,
            "16 bytes with the line end")
        #expect(throws: HTTP1Error.trailersTooLarge(limit: 20)) {
            try run(.chunked, "0\r\nA: 1\r\nB: " + String(repeating: "b", count: 30) + "\r\n\r\n", limits: limits)
        }
        // Every chunk-size line has its own limit: many small chunks are fine.
        let many = String(repeating: "1\r\nx\r\n", count: 20_000) + "0\r\n\r\n"
        #expect(try run(.chunked, many, step: 4096, limits: limits).2.utf8.count == 20_000)
        // The proxy's tracker still refuses an endless extension.
        #expect(throws: HTTP1Error.chunkLineTooLong(limit: 16_384)) {
            try run(.chunked, "1;" + String(repeating: "e", count: 20_000))
        }
    }

    @Test func contentOverTheLimitIsRefusedBeforeItIsHandedOver() throws {
        let limits = BodyTracker.Limits(contentBytes: 10)
        #expect(throws: HTTP1Error.bodyTooLarge(limit: 10)) { try BodyTracker(.length(11), limits: limits) }
        #expect(try run(.length(10), "0123456789", limits: limits).1.isComplete)
        #expect(throws: HTTP1Error.bodyTooLarge(limit: 10)) {
            try run(.chunked, "6\r\nabcdef\r\n5\r\n", limits: limits)
        }
        #expect(throws: HTTP1Error.bodyTooLarge(limit: 10)) {
            try run(.untilClose, "0123456789x", step: 4, limits: limits)
        }
    }

    @Test func untilCloseTakesEverything() throws {
        let (used, tracker, content) = try run(.untilClose, "anything at all")
        #expect(used == 15)
        #expect(!tracker.isComplete && tracker.isUntilClose)
        #expect(content == "anything at all")
    }
}
