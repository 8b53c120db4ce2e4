import Foundation
import TestSupport
import Testing

/// The fake's building blocks: JSON as Go reads and writes it, RFC 3339 as Go accepts it.
@Suite(.blocking) struct HelperTests {
    @Test func jsonKeepsOrderAndNumberTextAndWritesLikeGo() throws {
        let value = try TestJSON.parse(#" {"b":1,"a":[true,null,-0.5e3,"x\u00e9\ud83d\ude00\n"],"b":2} "#)
        #expect(value.keys == ["b", "a", "b"])
        #expect(value["b"] == 2)  // the last duplicate, like Go
        #expect(value["a"]?[2] == .number("-0.5e3") && value["a"]?[2]?.int == nil)
        #expect(value["a"]?[3]?.string == "xé😀\n")
        #expect(TestJSON.string("<a&b>\u{2028}\u{01}\"\\").description == #""\u003ca\u0026b\u003e\u2028\u0001\"\\""#)
        #expect(TestJSON.object([("k", [1, "v", nil, false])]).description == #"{"k":[1,"v",null,false]}"#)
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "-", "\"\u{01}\"", "tru", "{\"a\":1} x", "\"\\x\""])
    func invalidJSONIsRejected(text: String) {
        #expect(throws: TestJSON.ParseError.self) { try TestJSON.parse(text) }
    }

    @Test func parseFirstIgnoresWhatFollowsLikeGosDecoder() throws {
        #expect(try TestJSON.parseFirst(Array(#"{"version":3}garbage"#.utf8))["version"] == 3)
        #expect(throws: TestJSON.ParseError.self) { try TestJSON.parseFirst(Array("  ".utf8)) }
    }

    @Test(arguments: [
        ("2026-03-31T14:20:00Z", true), ("2026-03-31T14:20:00.1Z", true), ("2026-03-31T14:20:00.123456789123Z", true),
        ("2026-03-31T14:20:00+02:00", true), ("2024-02-29T00:00:00-23:59", true), ("0001-01-01T00:00:00Z", true),
        ("2025-02-29T00:00:00Z", false), ("2026-03-31T14:20:00", false), ("2026-03-31 14:20:00Z", false),
        ("2026-03-31t14:20:00Z", false), ("2026-03-31T14:20:00z", false), ("2026-03-31T14:20:60Z", false),
        ("2026-3-31T14:20:00Z", false), ("2026-03-31T14:20:00.Z", false), ("2026-03-31T14:20:00+0200", false),
        ("2026-03-31T14:20:00,5Z", false), ("2026-13-01T00:00:00Z", false), ("2026-03-31T14:20:00+02:60", false),
    ])
    func rfc3339AsGoAcceptsIt(text: String, valid: Bool) {
        #expect(FakeTime.isRFC3339(text) == valid)
    }

    @Test func timesAreFormattedLikeRFC3339Nano() {
        #expect(
            FakeTime.format(seconds: 1_774_966_029, nanoseconds: 482_913_337, fractionDigits: 9)
                == "2026-03-31T14:07:09.482913337Z")
        #expect(
            FakeTime.format(seconds: 1_774_966_029, nanoseconds: 90_000_000, fractionDigits: 9)
                == "2026-03-31T14:07:09.09Z")
        #expect(
            FakeTime.format(seconds: 1_774_966_029, nanoseconds: 482_913_337, fractionDigits: 0)
                == "2026-03-31T14:07:09Z")
        #expect(
            FakeTime.format(seconds: 1_774_966_029, nanoseconds: 400_000_000, fractionDigits: 3)
                == "2026-03-31T14:07:09.4Z")
    }

    @Test func uuidsInGosAcceptedForms() {
        let id = "84220de2-18cf-4ec8-aeca-1129e0cfde03"
        for text in [id, id.uppercased(), "urn:uuid:\(id)", "{\(id)}", id.filter { $0 != "-" }] {
            #expect(FakeIDs.canonicalUUID(text) == id, "\(text)")
        }
        for text in [
            "", "84220de2", id + "0", id.replacingOccurrences(of: "-", with: "_"),
            "g4220de2-18cf-4ec8-aeca-1129e0cfde03",
        ] {
            #expect(FakeIDs.canonicalUUID(text) == nil, "\(text)")
        }
        let made = FakeIDs.uuid()
        #expect(FakeIDs.canonicalUUID(made) == made && Array(made)[14] == "4")
        #expect(FakeIDs.deviceKey().count == 64)
    }
}
