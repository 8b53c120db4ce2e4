import Testing

@testable import DomainMatch

@Suite struct IPAddressTests {
    @Test(arguments: [
        ("1.2.3.4", "1.2.3.4"), ("0.0.0.0", "0.0.0.0"), ("255.255.255.255", "255.255.255.255"),
        ("::1", "::1"), ("::", "::"), ("2001:DB8::1", "2001:db8::1"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"), ("fe80::1:2", "fe80::1:2"),
        ("::ffff:192.0.2.1", "::ffff:c000:201"), ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
        ("2001:db8::", "2001:db8::"), ("0:0:0:0:0:0:0:1", "::1"), ("1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7"),
    ])
    func parsesAndPrintsCanonically(input: String, expected: String) {
        #expect(IPAddress(input)?.description == expected)
    }

    @Test(arguments: [
        "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.4 ", "a.b.c.d", ":::",
        "1::2::3", "1:2:3:4:5:6:7:8:9", "12345::", ":1::", "1:", "::1.2.3", "[::1]", "1.2.3.-4",
    ])
    func rejects(input: String) {
        #expect(IPAddress(input) == nil)
    }
}

@Suite struct MACAddressTests {
    @Test(arguments: [
        ("aa:bb:cc:dd:ee:ff", "aa:bb:cc:dd:ee:ff"), ("AA-BB-CC-DD-EE-0F", "aa:bb:cc:dd:ee:0f"),
        ("02:00:00:00:00:01", "02:00:00:00:00:01"),
    ])
    func parsesAndPrints(text: String, canonical: String) {
        #expect(MACAddress(text)?.description == canonical)
    }

    @Test(arguments: [
        "", "aa:bb:cc:dd:ee", "aa:bb:cc:dd:ee:ff:00", "aa-bb:cc:dd:ee:ff", "aa:bb:cc:dd:ee:fg", "aabb.ccdd.eeff",
    ])
    func rejects(text: String) {
        #expect(MACAddress(text) == nil)
    }

    @Test func fromOctets() {
        #expect(MACAddress(octets: [0x02, 0, 0, 0, 0, 0x01]) == MACAddress("02:00:00:00:00:01"))
        #expect(MACAddress(octets: [1, 2, 3]) == nil)
    }
}

@Suite struct IPAddressScopeTests {
    @Test(arguments: [
        ("127.0.0.1", true), ("127.9.8.7", true), ("0.0.0.0", true), ("0.1.2.3", true), ("169.254.1.1", true),
        ("::1", true), ("::", true), ("fe80::1", true), ("febf::1", true), ("::ffff:127.0.0.1", true),
        ("::ffff:169.254.0.9", true), ("10.0.0.1", false), ("192.168.1.1", false), ("8.8.8.8", false),
        ("128.0.0.1", false), ("fec0::1", false), ("2001:db8::1", false), ("::ffff:8.8.8.8", false), ("::2", false),
    ])
    func hostOrLinkScoped(text: String, scoped: Bool) throws {
        let address = try #require(IPAddress(text))
        #expect(address.isHostOrLinkScoped == scoped, "\(text)")
    }

    @Test func mappedAddressesUnwrap() {
        #expect(IPAddress("::ffff:10.1.2.3")!.unmapped == IPAddress("10.1.2.3"))
        #expect(IPAddress("2001:db8::1")!.unmapped == IPAddress("2001:db8::1"))
        #expect(IPAddress("10.1.2.3")!.unmapped == IPAddress("10.1.2.3"))
    }
}
