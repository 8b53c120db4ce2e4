import Glibc
import TestSupport
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

    /// The parse reads the text's bytes in place, with no array of them and no string per
    /// group: the proxy tries every CONNECT target as an address before it tries a name.
    /// Counted after a first call, which makes the runtime's type metadata once.
    @Test(.countsAllocationsAsShipped)
    func parsesAndRefusesWithoutAllocating() {
        let texts = ["192.168.1.20", "2001:db8::1:0:0:1", "::ffff:192.0.2.1", "www.example.com", "example.com:443"]
        for text in texts {
            let slice = text[...]
            var parsed = IPAddress(slice)  // the first call instantiates the runtime's metadata
            #expect(Allocations.count { parsed = IPAddress(slice) } == 0, "\(text)")
            #expect((parsed != nil) == (text.first!.isNumber || text.hasPrefix(":")), "\(text)")
        }
    }

    /// Held to the C library's `inet_pton` (which, like us, refuses leading zeros in IPv4)
    /// on every address form and on every one-byte change of them: the same verdict, and the
    /// same 16 or 4 bytes. Zone ids, which neither accepts, are not generated.
    @Test func agreesWithInetPton() {
        let seeds = [
            "1.2.3.4", "0.0.0.0", "255.255.255.255", "10.0.0.255", "::", "::1", "1::", "2001:db8::1",
            "2001:db8:0:0:1:0:0:1", "fe80::1:2", "::ffff:192.0.2.1", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::",
            "::2:3:4:5:6:7:8", "1:2:3:4:5:6::8", "1::8", "abcd:EF01:2345:6789:abcd:ef01:2345:6789",
            "1:2:3:4:5:6:1.2.3.4", "::1.2.3.4", "1::1.2.3.4", "64:ff9b::192.0.2.33", "ffff::ffff:ffff",
        ]
        let alphabet = Array("0123456789abcdefABCDEFgG:.x ".utf8)
        var inputs = Set(seeds)
        for seed in seeds {
            let bytes = Array(seed.utf8)
            for index in bytes.indices {
                var removed = bytes
                removed.remove(at: index)
                inputs.insert(String(decoding: removed, as: UTF8.self))
                for byte in alphabet {
                    var changed = bytes
                    changed[index] = byte
                    inputs.insert(String(decoding: changed, as: UTF8.self))
                    var inserted = bytes
                    inserted.insert(byte, at: index)
                    inputs.insert(String(decoding: inserted, as: UTF8.self))
                }
            }
        }
        var accepted = 0
        for input in inputs {
            var v4 = in_addr()
            var v6 = in6_addr()
            let expected: IPAddress?
            if inet_pton(AF_INET, input, &v4) == 1 {
                expected = .v4(UInt32(bigEndian: v4.s_addr))
            } else if inet_pton(AF_INET6, input, &v6) == 1 {
                expected = withUnsafeBytes(of: &v6) { IPAddress(v6Bytes: Array($0)) }
            } else {
                expected = nil
            }
            #expect(IPAddress(input) == expected, "\(input)")
            if expected != nil { accepted += 1 }
        }
        #expect(inputs.count > 15_000)
        #expect(accepted > 5_000)
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

    @Test(arguments: [
        ("10.0.0.1", true), ("10.255.255.255", true), ("172.16.0.1", true), ("172.31.255.255", true),
        ("192.168.1.20", true), ("100.64.0.1", true), ("100.127.255.255", true), ("fd00::20", true), ("fc00::1", true),
        ("fec0::1", true), ("::ffff:10.1.2.3", true), ("::ffff:192.168.0.1", true), ("9.255.255.255", false),
        ("11.0.0.1", false), ("172.15.255.255", false), ("172.32.0.0", false), ("192.169.0.1", false),
        ("100.63.255.255", false), ("100.128.0.0", false), ("192.0.2.1", false), ("127.0.0.1", false),
        ("fe80::1", false), ("fbff::1", false), ("2001:db8::1", false), ("::ffff:8.8.8.8", false),
    ])
    func privateUse(text: String, isPrivate: Bool) throws {
        let address = try #require(IPAddress(text))
        #expect(address.isPrivateUse == isPrivate, "\(text)")
    }

    @Test func domainSuffixesCoverTheirNamesAndBelow() throws {
        let suffixes = DomainSuffixes([try QueryName.parse("home.arpa"), try QueryName.parse("lan")])
        for name in ["home.arpa", "nas.home.arpa", "lan", "printer.lan"] {
            #expect(suffixes.covers(try QueryName.parse(name)), "\(name)")
        }
        for name in ["arpa", "myhome.arpa", "plan", "lan.example.com"] {
            #expect(!suffixes.covers(try QueryName.parse(name)), "\(name)")
        }
    }

    @Test func mappedAddressesUnwrap() {
        #expect(IPAddress("::ffff:10.1.2.3")!.unmapped == IPAddress("10.1.2.3"))
        #expect(IPAddress("2001:db8::1")!.unmapped == IPAddress("2001:db8::1"))
        #expect(IPAddress("10.1.2.3")!.unmapped == IPAddress("10.1.2.3"))
    }
}
