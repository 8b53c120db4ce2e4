import Testing

@testable import DomainMatch

@Suite struct QueryNameTests {
    @Test(arguments: [
        ("Example.COM", "example.com"),
        ("example.com.", "example.com"),
        ("Bücher.de", "xn--bcher-kva.de"),
        ("BÜCHER.DE", "xn--bcher-kva.de"),
        ("münchen。de", "xn--mnchen-3ya.de"),
        ("例え．テスト", "xn--r8jz45g.xn--zckzah"),
        ("a｡b", "a.b"),
        ("_dmarc.example.com", "_dmarc.example.com"),
        ("xn--bcher-kva.de", "xn--bcher-kva.de"),
        ("localhost", "localhost"),
        ("1.2.3.4", "1.2.3.4"),
        ("a-b.c_d.e", "a-b.c_d.e"),
    ])
    func normalises(input: String, expected: String) throws {
        #expect(try QueryName.parse(input).description == expected)
    }

    @Test(arguments: [
        ("", NameError.empty),
        (".", NameError.empty),
        ("a..b", NameError.emptyLabel),
        (".a", NameError.emptyLabel),
        ("a.com..", NameError.emptyLabel),
        ("a b.com", NameError.invalidCharacter(" ")),
        (" a.com", NameError.invalidCharacter(" ")),
        ("a*.com", NameError.invalidCharacter("*")),
        ("*.a.com", NameError.invalidCharacter("*")),
        ("a/b.com", NameError.invalidCharacter("/")),
        ("a:80", NameError.invalidCharacter(":")),
        ("::1", NameError.invalidCharacter(":")),
        ("☃.com", NameError.invalidCharacter("☃")),
        ("a\u{a0}b.com", NameError.invalidCharacter("\u{a0}")),
        (String(repeating: "a", count: 64) + ".com", NameError.labelTooLong(octets: 64)),
    ])
    func rejects(input: String, expected: NameError) {
        #expect(throws: expected) { try QueryName.parse(input) }
    }

    @Test func lengthLimits() throws {
        let label63 = String(repeating: "a", count: 63)
        #expect(try QueryName.parse(label63 + ".com").labelCount == 2)
        // 4 × 63 + 3 dots = 255 octets > 253.
        let long = [label63, label63, label63, label63].joined(separator: ".")
        #expect(throws: NameError.tooLong(octets: 255)) { try QueryName.parse(long) }
        let exact = [label63, label63, label63, String(repeating: "b", count: 61)].joined(separator: ".")
        #expect(try QueryName.parse(exact).bytes.count == 253)
        #expect(try QueryName.parse(exact + ".").bytes.count == 253)
        // A label that only grows past 63 octets once in punycode.
        #expect(throws: NameError.labelTooLong(octets: 66)) {
            try QueryName.parse(String(repeating: "ü", count: 60) + ".de")
        }
    }

    @Test func wireNamesAreLowercasedNotRejected() {
        let name = DomainName(wireLabels: [Array("WWW".utf8), [0x20, 0x41, 0xFF], Array("Com".utf8)])
        #expect(name?.bytes == Array("www.".utf8) + [0x20, 0x61, 0xFF] + Array(".com".utf8))
        #expect(name?.labelCount == 3)
        #expect(DomainName(wireLabels: []) == nil)
    }

    @Test func suffixesOnLabelBoundaries() throws {
        let name = try QueryName.parse("a.b.example.com")
        #expect(name.suffix(labels: 2).description == "example.com")
        #expect(name.suffix(labels: 4) == name)
        let entry = try QueryName.parse("example.com")
        #expect(name.isSubdomain(of: entry))
        #expect(entry.isSubdomain(of: entry))
        #expect(try !QueryName.parse("badexample.com").isSubdomain(of: entry))
        #expect(!entry.isSubdomain(of: name))
    }
}
