import DNSWire
import Testing

@Suite("Names: text form, case, labels")
struct NameTests {
    @Test func parsesDottedTextWithOrWithoutTrailingDot() throws {
        let expected: [UInt8] = [3, 0x77, 0x77, 0x77, 7] + Array("example".utf8) + [3] + Array("com".utf8) + [0]
        #expect(try DNSName("www.example.com").wire == expected)
        #expect(try DNSName("www.example.com.").wire == expected)
        #expect(try DNSName(".").isRoot)
        #expect(try DNSName("").isRoot)
        #expect(DNSName.root.wire == [0])
    }

    @Test func escapesRoundTripThroughThePresentationForm() throws {
        let tricky = try DNSName(#"a\.b.c\\d.\000\255x.sp\032ce"#)
        #expect(
            Array(tricky.labels).map(Array.init) == [
                Array("a.b".utf8), Array(#"c\d"#.utf8), [0, 255, 0x78], Array("sp ce".utf8),
            ])
        #expect(tricky.presentation == #"a\.b.c\\d.\000\255x.sp\032ce"#)
        #expect(try DNSName(tricky.presentation) == tricky)
        #expect(DNSName.root.presentation == ".")
        #expect(try DNSName("Www.Example.COM").description == "Www.Example.COM")
        // Raw UTF-8 is kept as bytes and escaped for logs.
        #expect(try DNSName("bücher.de").presentation == #"b\195\188cher.de"#)
    }

    @Test func badTextIsANamedError() throws {
        #expect(thrown { try DNSName("a..b") } == .emptyLabel(offset: 2))
        #expect(thrown { try DNSName(".a") } == .emptyLabel(offset: 0))
        #expect(thrown { try DNSName(String(repeating: "x", count: 64) + ".com") } == .labelTooLong(offset: 64))
        #expect(thrown { try DNSName(String(repeating: "x", count: 63)) } == nil)
        #expect(thrown { try DNSName(#"a\"#) } == .badEscape(offset: 1))
        #expect(thrown { try DNSName(#"a\25"#) } == .badEscape(offset: 1))
        #expect(thrown { try DNSName(#"a\256"#) } == .badEscape(offset: 1))
        // 4 × 63-byte labels = 256 bytes of wire form with the root: one too many.
        let label63 = String(repeating: "a", count: 63)
        let long = [label63, label63, label63, label63].joined(separator: ".")
        #expect(thrown { try DNSName(long) } == .nameTooLong(offset: 0))
        let longest = [label63, label63, label63, String(repeating: "a", count: 61)].joined(separator: ".")
        #expect(try DNSName(longest).wire.count == 255)
    }

    @Test func validatesUncompressedWire() {
        #expect(thrown { try DNSName(wire: [1, 0x61, 0]) } == nil)
        #expect(thrown { try DNSName(wire: [1, 0x61]) } == .truncated(section: .header, offset: 2))
        #expect(thrown { try DNSName(wire: [1, 0x61, 0, 7]) } == .trailingBytes(offset: 3))
        #expect(thrown { try DNSName(wire: [0xC0, 0]) } == .compressedName(offset: 0))
        #expect(
            thrown { try DNSName(wire: [64] + [UInt8](repeating: 0x61, count: 64) + [0]) } == .labelTooLong(offset: 0))
        #expect(thrown { try DNSName(wire: [0x80, 0]) } == .badLabelType(offset: 0))
    }

    @Test func equalityAndHashingIgnoreASCIICaseOnly() throws {
        let upper = try DNSName("WWW.Example.COM")
        let lower = try DNSName("www.example.com")
        #expect(upper == lower)
        #expect(upper.wire != lower.wire)
        #expect(upper.hashValue == lower.hashValue)
        #expect(Set([upper, lower]).count == 1)
        #expect(try DNSName("www.example.co") != lower)
        // Only A–Z fold: bytes 0xC0 and 0xE0 differ by 0x20 but are not letters.
        #expect(try DNSName(wire: [1, 0xC0, 0]) != DNSName(wire: [1, 0xE0, 0]))
        #expect(try DNSName("[") != DNSName("{"))
    }

    @Test func lowercasedSharesStorageWhenAlreadyLowercase() throws {
        let mixed = try DNSName("Ads.TRACKER.example")
        #expect(!mixed.isLowercase)
        #expect(mixed.lowercased().wire == wire("ads.tracker.example"))
        #expect(mixed.lowercased().isLowercase)
        let lower = try DNSName("ads.tracker.example")
        #expect(lower.lowercased().wire == lower.wire)
    }

    @Test func labelsParentAndSubdomain() throws {
        let host = try DNSName("a.b.resolver.arpa")
        #expect(host.labelCount == 4)
        #expect(DNSName.root.labelCount == 0)
        #expect(Array(DNSName.root.labels).isEmpty)
        #expect(host.parent == (try DNSName("b.resolver.arpa")))
        #expect(DNSName.root.parent == nil)
        let zone = try DNSName("Resolver.ARPA")
        #expect(host.isSubdomain(of: zone))
        #expect(zone.isSubdomain(of: zone))
        #expect(host.isSubdomain(of: .root))
        #expect(!(try DNSName("xresolver.arpa")).isSubdomain(of: zone))
        #expect(!zone.isSubdomain(of: host))
    }
}
