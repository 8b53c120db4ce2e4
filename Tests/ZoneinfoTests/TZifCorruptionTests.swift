import TestSupport
import Testing
import Zoneinfo

/// Corrupt TZif input of every shape is `.malformed`, never a trap.
@Suite struct TZifCorruptionTests {
    let berlinPath = zoneinfoDirectory + "/Europe/Berlin"

    private func expectMalformed(
        _ bytes: [UInt8], _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(throws: ZoneError.self, comment, sourceLocation: sourceLocation) {
            try ZoneRules(tzif: bytes, name: "test")
        }
        do {
            _ = try ZoneRules(tzif: bytes, name: "test")
        } catch {
            #expect(isMalformed(error), comment, sourceLocation: sourceLocation)
        }
    }

    @Test func emptyAndEveryTruncationIsMalformed() throws {
        let berlin = try fileBytes(berlinPath)
        #expect(throws: Never.self) { try ZoneRules(tzif: berlin, name: "Europe/Berlin") }
        // Every proper prefix: the headers, both data blocks and the footer's newlines.
        for length in 0..<berlin.count {
            expectMalformed(Array(berlin[0..<length]), "prefix of \(length) bytes")
        }
    }

    @Test func badMagicAndVersion() throws {
        var bytes = try fileBytes(berlinPath)
        bytes[3] = UInt8(ascii: "F")
        expectMalformed(bytes)
        bytes = try fileBytes(berlinPath)
        bytes[4] = UInt8(ascii: "1")
        expectMalformed(bytes)
        expectMalformed(Array("TZif".utf8))
        expectMalformed(Array("Not a zone file at all, but long enough to fill a header.".utf8))
    }

    @Test func hugeCountsAreMalformed() throws {
        let berlin = try fileBytes(berlinPath)
        // Each of the six counts of the first header, set to 2^32 - 1.
        for field in 0..<6 {
            var bytes = berlin
            for i in 0..<4 { bytes[20 + 4 * field + i] = 0xFF }
            expectMalformed(bytes, "count \(field)")
        }
        for field in 0..<6 {
            var builder = TZifBuilder()
            builder.counts[field] = 0x7FFF_FFFF
            expectMalformed(builder.bytes(), "count \(field)")
        }
    }

    @Test func structuralErrorsAreMalformed() {
        var builder = TZifBuilder()
        builder.transitions = [0, 10]
        builder.indices = [0, 1]  // only one type
        expectMalformed(builder.bytes(), "type index out of range")

        builder = TZifBuilder()
        builder.transitions = [10, 10]
        builder.indices = [0, 0]
        expectMalformed(builder.bytes(), "transitions not ascending")

        builder = TZifBuilder()
        builder.types = [.init(offset: 0, isDST: 2)]
        expectMalformed(builder.bytes(), "DST flag 2")

        builder = TZifBuilder()
        builder.types = [.init(offset: 0, designation: 9)]
        expectMalformed(builder.bytes(), "designation past the characters")

        builder = TZifBuilder()
        builder.characters = Array("UTC".utf8)
        expectMalformed(builder.bytes(), "designation without NUL")

        builder = TZifBuilder()
        builder.types = [.init(offset: Int32.min)]
        expectMalformed(builder.bytes(), "offset -2^31")

        builder = TZifBuilder()
        builder.types = []
        expectMalformed(builder.bytes(), "no types")

        builder = TZifBuilder()
        builder.counts[0] = 3  // isutcnt ≠ typecnt
        expectMalformed(builder.bytes(), "indicator count")

        builder = TZifBuilder()
        builder.footer = Array("UTC0\n".utf8)
        expectMalformed(builder.bytes(), "footer without leading newline")

        builder = TZifBuilder()
        builder.footer = Array("\nUTC0".utf8)
        expectMalformed(builder.bytes(), "footer without closing newline")

        builder = TZifBuilder()
        builder.footer = nil
        expectMalformed(builder.bytes(), "no footer")

        builder = TZifBuilder()
        builder.footer = Array("\nnot a rule\n".utf8)
        expectMalformed(builder.bytes(), "bad footer rule")
    }

    /// Random byte changes anywhere in a real file: parsed or `.malformed`, never a trap;
    /// whatever parses must answer queries without trapping.
    @Test func mutatedFilesNeverTrap() throws {
        let berlin = try fileBytes(berlinPath)
        var random = SplitMix(seed: 0x5EED)
        var parsed = 0
        for _ in 0..<3_000 {
            var bytes = berlin
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let position = Int(random.next() % UInt64(bytes.count))
                bytes[position] = UInt8(truncatingIfNeeded: random.next())
            }
            do {
                let rules = try ZoneRules(tzif: bytes, name: "mutant")
                parsed += 1
                for t in [Int64.min, -1 << 40, 0, 1_774_746_000, 1 << 40, Int64.max] {
                    _ = rules.offset(at: t)
                    _ = rules.localDateTime(at: t)
                    _ = rules.nextTransition(after: t)
                }
                _ = rules.resolve(local(2026, 3, 29, 2, 30))
            } catch {
                #expect(isMalformed(error))
            }
        }
        // Most mutations land in data that is not checked (e.g. the v1 block), so some parse.
        #expect(parsed > 0)
        #expect(parsed < 3_000)
    }
}
