import Devices
import TestSupport
import Testing

/// Host names come from a child's device: kept as sent, only bounded. Damaged or hostile
/// files are parsed as far as they go, never trapping, never held past the bounds.
@Suite struct HostileLeasesTests {
    @Test func controlCharactersAndMarkupAreKeptRaw() {
        let name = "<script>alert(1)</script>\u{7}\u{1B}[31m\"'&"
        let dnsmasq = "1765015200 aa:bb:cc:dd:ee:ff 192.168.1.23 \(name) *\n"
        #expect(DHCPLeases.parse(bytes(dnsmasq)).first?.hostName == name)
        // dhcpd: an escaped quote, an escape character, a right-to-left override (U+202E)
        // and NUL, all from octal escapes.
        let dhcpd =
            #"lease 10.0.0.1 { hardware ethernet 00:00:00:00:00:01; client-hostname "<b \"x\">\033[2J\342\200\256gpj.exe\000"; }"#
        #expect(DHCPLeases.parse(bytes(dhcpd)).first?.hostName == "<b \"x\">\u{1B}[2J\u{202E}gpj.exe\u{0}")
        let kea = """
            address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,user_context,pool_id
            10.0.0.2,00:00:00:00:00:02,,3600,1765015200,1,0,0,<img src=x onerror=alert(1)>&#x0a&#x0d,0,,0
            """
        #expect(DHCPLeases.parse(bytes(kea)).first?.hostName == "<img src=x onerror=alert(1)>\n\r")
    }

    @Test func aLongNameIsCutAtACharacterBoundary() {
        let ascii = String(repeating: "a", count: 10_000)
        let long = DHCPLeases.parse(bytes("1765015200 aa:bb:cc:dd:ee:ff 10.0.0.1 \(ascii) *\n"))
        #expect(long.first?.hostName == String(repeating: "a", count: DHCPLeases.maximumHostNameBytes))
        // 200 two-byte letters: 126 of them (252 bytes) fit, half of the 127th does not.
        let accented = String(repeating: "é", count: 200)
        let cut = DHCPLeases.parse(bytes("1765015200 aa:bb:cc:dd:ee:ff 10.0.0.1 \(accented) *\n"))
        #expect(cut.first?.hostName == String(repeating: "é", count: 126))
    }

    @Test func invalidUTF8IsReplacedAndStaysWithinTheBound() {
        var line = bytes("1765015200 aa:bb:cc:dd:ee:ff 10.0.0.1 ok")
        line += [0xFF, 0xFE, 0xC3]
        line += bytes(" *\n")
        #expect(DHCPLeases.parse(line).first?.hostName == "ok\u{FFFD}\u{FFFD}\u{FFFD}")
        // 253 bad bytes would be 759 bytes of replacement characters: cut to the bound.
        let bad = bytes("1765015200 aa:bb:cc:dd:ee:ff 10.0.0.1 ") + [UInt8](repeating: 0xFF, count: 300) + bytes(" *\n")
        let name = DHCPLeases.parse(bad).first?.hostName
        #expect(name.map { $0.utf8.count <= DHCPLeases.maximumHostNameBytes } == true)
        #expect(name?.unicodeScalars.allSatisfy { $0 == "\u{FFFD}" } == true)
    }

    @Test func aHugeQuotedNameInDhcpdIsBounded() {
        let huge = String(repeating: "x", count: 10 << 20)
        let file = "lease 10.0.0.1 { hardware ethernet 00:00:00:00:00:01; client-hostname \"\(huge)\"; }"
        #expect(DHCPLeases.parse(bytes(file)).first?.hostName?.utf8.count == DHCPLeases.maximumHostNameBytes)
    }

    @Test func garbageNeverTraps() {
        var generator = SeededGenerator(seed: 0x1ea5e)
        for round in 0..<20 {
            // Random bytes with the formats' punctuation made common, so parsers go deep.
            let alphabet = bytes(" \n\t{};\"\\#,:/-.0123456789abcdefx") + [0x00, 0xFF, 0xC3]
            let garbage = (0..<(round * 5_000)).map { _ in
                Bool.random(using: &generator)
                    ? alphabet.randomElement(using: &generator)! : UInt8.random(in: 0...255, using: &generator)
            }
            _ = DHCPLeases.parse(garbage)
            for format in LeaseFileFormat.allCases {
                #expect(DHCPLeases.parse(garbage, as: format).count <= DHCPLeases.maximumLeases)
            }
        }
    }

    @Test func truncatedFilesKeepWhatIsWhole() {
        let dnsmasq = bytes(
            "1765015200 aa:bb:cc:dd:ee:ff 192.168.1.23 one *\n1765015200 aa:bb:cc:dd:ee:01 192.168.1.24 two *\n")
        for length in 0...dnsmasq.count {
            let leases = DHCPLeases.parse(Array(dnsmasq[..<length]))
            #expect(leases.count <= 2)
            // A line cut before its last field is skipped, so no name is ever half a name.
            #expect(leases.allSatisfy { $0.hostName == "one" || $0.hostName == "two" })
        }
    }

    @Test func aTenMegabyteFileIsBoundedInLeases() {
        // 10 MB of distinct, valid leases: more than a home has; the first ones are kept.
        var file: [UInt8] = []
        file.reserveCapacity(10 << 20)
        var index: UInt32 = 0
        while file.count < 10 << 20 {
            let address = IPAddressText.v4(0x0A00_0000 | index)
            file += bytes("1765015200 02:00:00:00:00:01 \(address) device-\(index) *\n")
            index += 1
        }
        let leases = DHCPLeases.parse(file)
        #expect(leases.count == DHCPLeases.maximumLeases)
        #expect(leases.first?.hostName == "device-0")
        #expect(leases.last?.hostName == "device-\(DHCPLeases.maximumLeases - 1)")
    }

    @Test func tenMegabytesWithoutALineBreakIsNoFormat() {
        let file = [UInt8](repeating: UInt8(ascii: "7"), count: 10 << 20)
        #expect(DHCPLeases.format(of: file) == nil)
        #expect(DHCPLeases.parse(file) == [])
    }
}

/// A dotted quad from its 32 bits, for generated files.
enum IPAddressText {
    static func v4(_ bits: UInt32) -> String {
        "\(bits >> 24).\(bits >> 16 & 0xFF).\(bits >> 8 & 0xFF).\(bits & 0xFF)"
    }
}
