import Testing
import Zoneinfo

/// The TZif parser on real files and on crafted valid bytes.
@Suite struct TZifTests {
    let berlinPath = zoneinfoDirectory + "/Europe/Berlin"

    @Test func craftedFileParses() throws {
        var builder = TZifBuilder()
        builder.transitions = [0, 1_000]
        builder.indices = [1, 0]
        builder.types = [.init(offset: 3600, designation: 0), .init(offset: 7200, isDST: 1, designation: 4)]
        builder.characters = Array("AAA\0BBB\0".utf8)
        builder.footer = Array("\nAAA-1\n".utf8)
        let rules = try ZoneRules(tzif: builder.bytes(), name: "Test/Crafted")
        #expect(rules.name == "Test/Crafted")
        #expect(rules.offset(at: -1) == 3600)
        #expect(rules.offset(at: 0) == 7200)
        #expect(rules.abbreviation(at: 999) == "BBB")
        #expect(rules.isDaylightSavingTime(at: 999))
        #expect(rules.offset(at: 1_000) == 3600)
        #expect(rules.abbreviation(at: 1_000_000_000) == "AAA")
    }

    /// From the last transition on, the footer governs, as in glibc, even where the
    /// file's last type disagrees with it (RFC 8536 says they must agree).
    @Test func footerGovernsFromTheLastTransition() throws {
        var builder = TZifBuilder()
        builder.transitions = [0, 1_000]
        builder.indices = [0, 1]
        builder.types = [.init(offset: 3600, designation: 0), .init(offset: 7200, isDST: 1, designation: 4)]
        builder.characters = Array("AAA\0BBB\0".utf8)
        builder.footer = Array("\nAAA-1\n".utf8)
        let rules = try ZoneRules(tzif: builder.bytes(), name: "t")
        #expect(rules.offset(at: 999) == 3600)
        #expect(rules.offset(at: 1_000) == 3600)
        #expect(rules.abbreviation(at: 1_000) == "AAA")
        #expect(rules.nextTransition(after: 0) == nil)
    }

    /// Before the first transition: the first standard-time type, as glibc does.
    @Test func beforeFirstTransitionUsesFirstStandardType() throws {
        var builder = TZifBuilder()
        builder.transitions = [0]
        builder.indices = [0]
        builder.types = [.init(offset: 7200, isDST: 1, designation: 0), .init(offset: 3600, designation: 4)]
        builder.characters = Array("DDD\0SSS\0".utf8)
        builder.footer = Array("\n\n".utf8)
        let rules = try ZoneRules(tzif: builder.bytes(), name: "t")
        #expect(rules.offset(at: -1) == 3600)
        #expect(rules.abbreviation(at: -1) == "SSS")
        #expect(rules.offset(at: 0) == 7200)
        // An empty footer: the last type holds for ever.
        #expect(rules.offset(at: Int64.max) == 7200)
        #expect(rules.nextTransition(after: 0) == nil)
    }

    @Test func leapSecondRecordsAreIgnored() throws {
        var builder = TZifBuilder()
        builder.leapRecords = [(78_796_800, 1), (94_694_401, 2)]
        let rules = try ZoneRules(tzif: builder.bytes(), name: "leapy")
        #expect(rules.offset(at: 100_000_000) == 0)
        #expect(rules.localDateTime(at: 94_694_401) == local(1973, 1, 1, 0, 0, 1))
        let rightUTC = try zone("right/UTC")
        #expect(rightUTC.offset(at: utc(2026, 1, 1)) == 0)
        let rightBerlin = try zone("right/Europe/Berlin")
        #expect(rightBerlin.abbreviation(at: utc(2026, 7, 1)) == "CEST")
    }

    @Test func versionOneFileUsesItsThirtyTwoBitData() throws {
        var builder = TZifBuilder()
        builder.version = 0
        builder.transitions = [-100, 100]
        builder.indices = [1, 0]
        builder.types = [.init(offset: 0), .init(offset: -3600, designation: 4)]
        builder.characters = Array("UTC\0ONE\0".utf8)
        let v1 = try ZoneRules(tzif: builder.bytes(), name: "v1")
        #expect(v1.offset(at: -101) == 0)
        #expect(v1.offset(at: -100) == -3600)
        #expect(v1.offset(at: 100) == 0)
        #expect(v1.offset(at: Int64.max) == 0)

        // Berlin's own v1 block, read as a v1 file, agrees with its v2 data in 1901...2037.
        var bytes = try fileBytes(berlinPath)
        bytes[4] = 0
        let old = try ZoneRules(tzif: bytes, name: "v1 Berlin")
        let new = try zone("Europe/Berlin")
        var t = Int64(Int32.min) + 1
        while t < Int64(Int32.max) {
            #expect(old.offset(at: t) == new.offset(at: t))
            t += 86_400 * 17 + 1
        }
        #expect(old.nextTransition(after: utc(2026, 1, 1)) == utc(2026, 3, 29, 1))
        #expect(old.nextTransition(after: utc(2037, 10, 25, 1)) == nil)  // no footer
    }

}
