import Devices
import Testing

@Suite struct ODHCPDLeasesTests {
    // Lines of both odhcpd generations: twelve hex digits before 2025, ether_ntoa's form
    // after (musl's two digits, glibc's one); host lines as older versions interleaved.
    let file = #"""
        192.168.1.23	laptop.lan	laptop
        # br-lan aa:bb:cc:dd:ee:ff ipv4 laptop 1765015200 c0a80117 32 192.168.1.23/32
        # br-lan 3c22fb010203 ipv4 - 1765015300 c0a80118 32 192.168.1.24/32
        # br-lan 0:11:22:3:4:5 ipv4 broken\x20My Phone! 1765015400 c0a80119 32 192.168.1.25/32
        # br-lan B8:27:EB:12:34:56 ipv4 pi -1 c0a8011a 32 192.168.1.26/32
        # br-lan dc:a6:32:00:00:01 ipv4 old 0 c0a8011b 32
        # br-lan 000100012c5e6f70aabbccddeeff 1a2b3c4d phone 1765015200 1234 128 fd00::1234/128
        fd00::1234	phone.lan	phone
        """#

    @Test func readsTheDHCPv4LinesAndSkipsDHCPv6() {
        #expect(DHCPLeases.format(of: bytes(file)) == .odhcpd)
        #expect(
            DHCPLeases.parse(bytes(file)) == [
                Lease(
                    mac: mac("aa:bb:cc:dd:ee:ff"), address: ip("192.168.1.23"), hostName: "laptop",
                    expires: 1_765_015_200),
                Lease(
                    mac: mac("3c:22:fb:01:02:03"), address: ip("192.168.1.24"), hostName: nil, expires: 1_765_015_300),
                // odhcpd's mark taken off; the name's own spaces kept.
                Lease(
                    mac: mac("00:11:22:03:04:05"), address: ip("192.168.1.25"), hostName: "My Phone!",
                    expires: 1_765_015_400),
                Lease(mac: mac("b8:27:eb:12:34:56"), address: ip("192.168.1.26"), hostName: "pi", expires: nil),
                // Run out (0), written without its address by older odhcpd: the hex field has it.
                Lease(mac: mac("dc:a6:32:00:00:01"), address: ip("192.168.1.27"), hostName: "old", expires: 0),
            ])
    }

    @Test func aHostsFileAloneHasNoLeases() {
        // /tmp/hosts/odhcpd*: names for dnsmasq, no MAC addresses.
        let hosts = "192.168.1.23\tlaptop.lan\tlaptop\nfd00::1234\tphone.lan\tphone\n"
        #expect(DHCPLeases.format(of: bytes(hosts)) == nil)
        #expect(DHCPLeases.parse(bytes(hosts)) == [])
    }

    @Test func aFileOfOnlyDHCPv6LeasesIsOdhcpdsAndEmpty() {
        let file = "# br-lan 000100012c5e6f70aabbccddeeff 1a2b3c4d phone 1765015200 1234 128 fd00::1234/128\n"
        #expect(DHCPLeases.format(of: bytes(file)) == .odhcpd)
        #expect(DHCPLeases.parse(bytes(file)) == [])
    }

    @Test func malformedLinesAreSkipped() {
        let file = """
            # br-lan aa:bb:cc:dd:ee:ff ipv4 good 1765015200 c0a80117 32 192.168.1.23/32
            # br-lan aa:bb:cc:dd:ee:01 ipv4 bad-length 1765015200 c0a80117 24 192.168.1.23/24
            # br-lan aa:bb:cc:dd:ee:02 ipv4 bad-end soon c0a80117 32 192.168.1.23/32
            # br-lan aa:bb:cc:dd:ee:03 ipv4 bad-address 1765015200 c0a80117 32 192.168.1.300/32
            # br-lan aa:bb:cc:dd:ee:04 ipv4 big-hex 1765015200 1c0a80117 32
            # br-lan aa:bb:cc:dd:ee ipv4 short-mac 1765015200 c0a80117 32 192.168.1.23/32
            # br-lan aa:bb:cc:dd:ee:05 ipv4 cut 17650
            """
        #expect(DHCPLeases.parse(bytes(file)).map(\.hostName) == ["good"])
    }
}
