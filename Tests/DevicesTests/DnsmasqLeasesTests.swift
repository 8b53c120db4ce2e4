import Devices
import Testing

@Suite struct DnsmasqLeasesTests {
    // IPv4 leases, an InfiniBand client (ARP type 0x20, 20-byte address), then the server's
    // DUID and two DHCPv6 leases (an IAID, and a temporary address's `T` IAID).
    let file = """
        1765015200 aa:bb:cc:dd:ee:ff 192.168.1.23 Pixel-7 01:aa:bb:cc:dd:ee:ff
        1765018800 3c:22:fb:01:02:03 192.168.1.24 * *
        0 b8:27:eb:12:34:56 192.168.1.2 pi-hole *
        1765020000 20-00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00:11:22:33 192.168.1.30 ib-host *
        duid 00:01:00:01:2c:5e:6f:70:aa:bb:cc:dd:ee:ff
        1765015200 1234567 fd00::23 Pixel-7 00:02:00:00:ab:11:5c:7a:21:33:42:90:aa:01
        1765015200 T7654321 fd00::99 * 00:01:00:01:2c:5e:6f:71:3c:22:fb:01:02:03

        """

    @Test func readsEachIPv4LeaseAndSkipsTheRest() {
        #expect(DHCPLeases.format(of: bytes(file)) == .dnsmasq)
        #expect(
            DHCPLeases.parse(bytes(file)) == [
                Lease(
                    mac: mac("aa:bb:cc:dd:ee:ff"), address: ip("192.168.1.23"), hostName: "Pixel-7",
                    expires: 1_765_015_200),
                Lease(
                    mac: mac("3c:22:fb:01:02:03"), address: ip("192.168.1.24"), hostName: nil, expires: 1_765_018_800),
                // 0: a lease without end.
                Lease(mac: mac("b8:27:eb:12:34:56"), address: ip("192.168.1.2"), hostName: "pi-hole", expires: nil),
            ])
    }

    @Test func upperCaseAndCRLFRead() {
        let leases = DHCPLeases.parse(bytes("1765015200 AA:BB:CC:DD:EE:FF 10.0.0.5 tv *\r\n"))
        #expect(
            leases == [
                Lease(mac: mac("aa:bb:cc:dd:ee:ff"), address: ip("10.0.0.5"), hostName: "tv", expires: 1_765_015_200)
            ])
    }

    @Test func malformedLinesAreSkipped() {
        let file = """
            1765015200 aa:bb:cc:dd:ee:ff 192.168.1.23 ok *
            1765015200 aa:bb:cc:dd:ee 192.168.1.24 short-mac *
            1765015200 aa:bb:cc:dd:ee:ff 192.168.1.300 bad-address *
            -5 aa:bb:cc:dd:ee:01 192.168.1.25 negative *
            soon aa:bb:cc:dd:ee:02 192.168.1.26 word *
            1765015200 aa:bb:cc:dd:ee:03 192.168.1.27 too many fields here
            1765015200 aa:bb:cc:dd:ee:04 192.168.1.28 no-client-id
            1765015200 aa:bb:cc:dd:e
            """
        #expect(DHCPLeases.parse(bytes(file)).map(\.hostName) == ["ok"])
    }

    @Test func anOpenWrtDhcpLeasesFileIsTheSameFormat() {
        // /tmp/dhcp.leases on OpenWrt is written by its dnsmasq.
        let file = "1765015200 f0:9f:c2:10:20:30 192.168.1.140 Galaxy-S23 01:f0:9f:c2:10:20:30\n"
        #expect(DHCPLeases.format(of: bytes(file)) == .dnsmasq)
        #expect(DHCPLeases.parse(bytes(file)).first?.hostName == "Galaxy-S23")
    }
}
