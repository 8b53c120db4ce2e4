import HTTP1

/// The body decoder (`BodyTracker`) on chunked framing. The first bytes choose the limits
/// and the pieces the body is fed in; the rest is the body as it arrives.
enum HTTPChunkedTarget {
    static let target = FuzzTarget(
        "http-chunked",
        "a body fed in pieces gives the same content, end, and error as fed whole; content chunked by a "
            + "plain encoder decodes to itself and ends exactly where the encoding ends"
    ) { input throws(PropertyViolation) in
        var choices = InputChoices(input)
        let limits = BodyTracker.Limits(
            lineBytes: 1 + Int(choices.byte()), trailerBytes: 1 + Int(choices.byte()) * 4,
            contentBytes: choices.byte() == 0xFF ? .max : Int64(choices.uint16()))
        let sizes = (0..<Int(choices.byte() % 8)).map { _ in choices.byte() }
        let body = choices.rest
        let whole = Outcome(body, in: [0..<body.count], limits: limits)
        let split = Outcome(body, in: pieces(of: body.count, sizes: sizes), limits: limits)
        try check(split == whole, "fed in pieces: \(split); fed whole: \(whole)")
        if whole.error == nil {
            try check(whole.consumed == body.count || whole.complete, "stopped early without reaching the end")
        }
        try encodedContentDecodes(body, sizes: sizes)
    }

    /// What feeding a body gives: the content handed over, the bytes taken, whether the
    /// body ended, and the error if one was thrown.
    struct Outcome: Equatable, CustomStringConvertible {
        var content: [UInt8] = []
        var consumed = 0
        var complete = false
        var error: HTTP1Error?

        init(_ body: [UInt8], in ranges: [Range<Int>], limits: BodyTracker.Limits) {
            var tracker: BodyTracker
            do {
                tracker = try BodyTracker(.chunked, limits: limits)
            } catch {
                self.error = error
                return
            }
            var content: [UInt8] = []
            body.withUnsafeBytes { raw in
                for range in ranges {
                    do throws(HTTP1Error) {
                        let taken = try tracker.consume(UnsafeRawBufferPointer(rebasing: raw[range])) {
                            content += $0
                        }
                        consumed += taken
                        if taken < range.count { break }
                    } catch {
                        self.error = error
                        break
                    }
                }
            }
            self.content = content
            complete = tracker.isComplete
        }

        /// Bytes taken before an error are not compared: fed whole, none are reported.
        static func == (a: Outcome, b: Outcome) -> Bool {
            a.error == b.error && a.content == b.content && a.complete == b.complete
                && (a.error != nil || a.consumed == b.consumed)
        }

        var description: String {
            "\(content.count) content bytes, \(consumed) taken, complete \(complete), error \(String(describing: error))"
        }
    }

    /// The input itself as content, chunked in the chosen sizes with an extension on one
    /// chunk and a trailer, then bytes of a next message: all the content comes back and
    /// the next message is not taken.
    static func encodedContentDecodes(_ content: [UInt8], sizes: [UInt8]) throws(PropertyViolation) {
        var encoded: [UInt8] = []
        for (index, range) in pieces(of: content.count, sizes: sizes).enumerated() {
            encoded += Array(String(range.count, radix: 16).utf8)
            if index == 1 { encoded += Array(";name=value".utf8) }
            encoded += [0x0D, 0x0A] + content[range] + [0x0D, 0x0A]
        }
        encoded += Array("0\r\nX-Trailer: t\r\n\r\n".utf8)
        let next = Array("GET / HTTP/1.1\r\n".utf8)
        let outcome = Outcome(encoded + next, in: pieces(of: encoded.count + next.count, sizes: sizes), limits: .init())
        try check(outcome.error == nil, "own encoding rejected: \(outcome)")
        try check(outcome.complete && outcome.consumed == encoded.count, "own encoding: \(outcome)")
        try check(outcome.content == content, "own encoding decodes to other content")
    }
}
