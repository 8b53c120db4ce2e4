@testable import HTTPProxy
import Testing

@Suite struct BodyTrackerTests {
    /// Feeds `text` in pieces of `step` bytes; returns how many bytes belonged to the body.
    private func run(_ framing: BodyFraming, _ text: String, step: Int = .max) throws -> (Int, BodyTracker) {
        var tracker = BodyTracker(framing)
        let bytes = Array(text.utf8)
        var used = 0, offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + min(step, bytes.count))
            let taken = try bytes[offset..<end].withUnsafeBytes { raw in try tracker.consume(raw) }
            used += taken
            if taken < end - offset { break }
            offset = end
        }
        return (used, tracker)
    }

    @Test func aLengthEndsAfterThatManyBytes() throws {
        let (used, tracker) = try run(.length(5), "helloGET / HTTP/1.1")
        #expect(used == 5)
        #expect(tracker.isComplete)
        #expect(BodyTracker(.length(0)).isComplete)
    }

    @Test func chunkedEndsAfterTheLastChunkAndTrailers() throws {
        let body = "4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n"
        for step in [1, 2, 3, 7, 1000] {
            let (used, tracker) = try run(.chunked, body + "NEXT", step: step)
            #expect(used == body.utf8.count, "step \(step)")
            #expect(tracker.isComplete)
        }
        let (bare, done) = try run(.chunked, "3\nabc\n0\n\nX")
        #expect(bare == 9)
        #expect(done.isComplete)
    }

    @Test func incompleteChunkedIsNotComplete() throws {
        let (used, tracker) = try run(.chunked, "a\r\n01234")
        #expect(used == 8)
        #expect(!tracker.isComplete)
    }

    @Test(arguments: ["x\r\n", "\r\n", "1\r\nab", "1\r\nax\r\n", "1234567890abcdef0\r\n", "3\rx"])
    func malformedChunkingThrows(_ text: String) {
        #expect(throws: ProxyError.malformedChunk) { try run(.chunked, text) }
    }

    @Test func untilCloseTakesEverything() throws {
        let (used, tracker) = try run(.untilClose, "anything at all")
        #expect(used == 15)
        #expect(!tracker.isComplete)
    }
}
