import HTTP1
import Testing

@Suite struct HeaderFieldsTests {
    private func fields(_ lines: String) throws(HTTP1Error) -> HeaderFields {
        try HeaderFields(Array("GET / HTTP/1.1\r\n\(lines)\r\n".utf8))
    }

    /// Each malformed field line is named, with its line number (the start line is 0).
    @Test(arguments: [
        ("A: 1\r\nB: 2\r\n folded\r\n", HTTP1Error.obsoleteLineFolding(line: 3)),
        ("A: 1\r\n\tfolded\r\n", .obsoleteLineFolding(line: 2)),
        ("NoColon\r\n", .missingColon(line: 1)),
        ("Host : x\r\n", .whitespaceBeforeColon(line: 1)),
        ("Host\t: x\r\n", .whitespaceBeforeColon(line: 1)),
        (": empty-name\r\n", .invalidFieldName(line: 1)),
        ("Bad Header: x\r\n", .invalidFieldName(line: 1)),
        ("Bad\u{1}: x\r\n", .invalidFieldName(line: 1)),
        ("B(d: x\r\n", .invalidFieldName(line: 1)),
        ("Caf\u{e9}: x\r\n", .invalidFieldName(line: 1)),
        ("X: a\u{0}b\r\n", .invalidFieldValue(line: 1)),
        ("X: a\u{7f}\r\n", .invalidFieldValue(line: 1)),
        ("X: a\u{1b}[31m\r\n", .invalidFieldValue(line: 1)),
        ("A: 1\r\nX: a\rb\r\n", .bareCarriageReturn(line: 2)),
        ("X: a\r\r\n", .bareCarriageReturn(line: 1)),
        ("X\rY: a\r\n", .bareCarriageReturn(line: 1)),
        ("\r\r\n", .bareCarriageReturn(line: 1)),
    ])
    func malformedFieldLinesAreNamed(_ lines: String, _ error: HTTP1Error) {
        #expect(throws: error) { try fields(lines) }
    }

    @Test func valuesKeepObsTextAndInnerWhitespaceAndLoseOWS() throws {
        let parsed = try fields("X-Empty:\r\nX-Tab: \ta\tb \t\r\nX-Obs: caf\u{e9}\r\n")
        #expect(parsed.first("x-empty") == "")
        #expect(parsed.first("x-tab") == "a\tb")
        #expect(parsed.first("x-obs") == "caf\u{e9}")
        #expect(parsed.pairs.map(\.0) == ["X-Empty", "X-Tab", "X-Obs"], "names as sent")
    }

    @Test func lookupsIgnoreCaseAndKeepOrder() throws {
        let parsed = try fields("Via: 1.1 a\r\nVIA: 1.0 B\r\nX: y\r\n")
        #expect(parsed.all("via") == ["1.1 a", "1.0 B"])
        #expect(parsed.contains("x") && !parsed.contains("x-missing"))
        #expect(parsed.first("x-missing") == nil)
        #expect(parsed.anyValue(of: "via", contains: "1.0 b"))
        #expect(!parsed.anyValue(of: "x", contains: "1.0 b"))
        #expect(!parsed.anyValue(of: "via", contains: "1.1 a, 1.0"), "one value at a time")
    }

    @Test func listsAreSplitTrimmedAndLowercased() throws {
        let parsed = try fields(
            "Connection: keep-alive , ,X-Private\r\nConnection: Upgrade\r\nX-Private: 1\r\nX-Pri: 2\r\n")
        #expect(parsed.tokens("connection") == ["keep-alive", "x-private", "upgrade"], "empty members skipped")
        #expect(parsed.containsToken("UPGRADE", in: "connection"))
        #expect(!parsed.containsToken("close", in: "connection"))
        let named = parsed.fields.filter { parsed.isListed($0, in: "connection") }.map(parsed.name)
        #expect(named == ["X-Private"])
    }

    @Test func bytesAfterTheEmptyLineAreNotLookedAt() throws {
        let parsed = try HeaderFields(Array("GET / HTTP/1.1\r\nA: 1\r\n\r\nB: 2\r\n".utf8))
        #expect(parsed.count == 1)
    }

    /// Any bytes at all: parsed or refused with a named error, never a trap.
    @Test func randomBytesNeverTrap() {
        var state: UInt64 = 0x1234_5678
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let alphabet: [UInt8] = Array("GET / HTTP/1.1:\r\n \tHost:ab\u{0}\u{7f}".utf8) + [0xFF, 0x80]
        for _ in 0..<5000 {
            var bytes = (0..<Int(next() % 80)).map { _ in alphabet[Int(next() % UInt64(alphabet.count))] }
            bytes += [0x0D, 0x0A, 0x0D, 0x0A]
            _ = try? RequestHead(bytes)
            _ = try? ResponseHead(bytes)
        }
    }
}
