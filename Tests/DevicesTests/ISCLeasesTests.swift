import Devices
import Testing

@Suite struct ISCLeasesTests {
    // As dhcpd 4.4 writes it: a header, blocks appended as leases change, a DHCPv6 block.
    let file = #"""
        # The format of this file is documented in the dhcpd.leases(5) manual page.
        # This lease file was written by isc-dhcp-4.4.3-P1

        # authoring-byte-order entry is generated, DO NOT DELETE
        authoring-byte-order little-endian;

        server-duid "\000\001\000\001,^op\252\273\314\335\356\377";

        lease 192.168.1.100 {
          starts 5 2026/12/04 10:00:00;
          ends 5 2026/12/04 22:00:00;
          cltt 5 2026/12/04 10:00:00;
          binding state active;
          next binding state free;
          rewind binding state free;
          hardware ethernet aa:bb:cc:dd:ee:ff;
          uid "\001\252\273\314\335\356\377";
          set vendor-class-identifier = "android-dhcp-14";
          client-hostname "Emma\"s Tablet";
        }
        lease 192.168.1.101 {
          starts 5 2026/12/04 09:00:00;
          ends 5 2026/12/04 21:00:00;
          binding state active;
          hardware ethernet 3c:22:fb:1:2:3;
          client-hostname "Lu\303\255s-iPhone";
        }
        lease 192.168.1.100 {
          starts 6 2026/12/05 10:00:00;
          ends 6 2026/12/05 22:00:00;
          binding state active;
          next binding state free;
          hardware ethernet aa:bb:cc:dd:ee:ff;
          client-hostname "Emma\"s Tablet";
        }
        lease 192.168.1.101 {
          starts 6 2026/12/05 09:00:00;
          ends 6 2026/12/05 09:00:00;
          tstp 6 2026/12/05 09:00:00;
          binding state free;
          hardware ethernet 3c:22:fb:01:02:03;
        }
        lease 192.168.1.102 {
          starts 4 2026/12/03 08:00:00;
          ends never;
          binding state active;
          hardware ethernet b8:27:eb:12:34:56;
        }
        lease 192.168.1.103 {
          starts epoch 1764972000; # Fri Dec 05 22:00:00 2025
          ends epoch 1765015200; # Sat Dec 06 10:00:00 2025
          binding state active;
          hardware ethernet dc:a6:32:00:00:01;
          client-hostname "kitchen";
        }
        ia-na "\001\000\000\000\000\001\000\001,^op\252\273\314\335\356\377" {
          cltt 5 2026/12/04 10:00:00;
          iaaddr fd00::23 {
            binding state active;
            preferred-life 27000;
            max-life 43200;
            ends 5 2026/12/04 22:00:00;
          }
        }

        """#

    @Test func theLastBlockForAnAddressWinsAndFreeLeasesAreGone() {
        #expect(DHCPLeases.format(of: bytes(file)) == .iscDHCPD)
        #expect(
            DHCPLeases.parse(bytes(file)) == [
                // 2026-12-05 22:00:00 UTC, from the second block.
                Lease(
                    mac: mac("aa:bb:cc:dd:ee:ff"), address: ip("192.168.1.100"), hostName: "Emma\"s Tablet",
                    expires: 1_796_508_000),
                Lease(mac: mac("b8:27:eb:12:34:56"), address: ip("192.168.1.102"), hostName: nil, expires: nil),
                Lease(
                    mac: mac("dc:a6:32:00:00:01"), address: ip("192.168.1.103"), hostName: "kitchen",
                    expires: 1_765_015_200),
            ])
    }

    @Test func octalEscapesMakeUTF8AndOneDigitGroupsMakeAMAC() {
        let block =
            #"lease 10.0.0.9 { ends 5 2026/12/04 21:00:00; hardware ethernet 3c:22:fb:1:2:3; client-hostname "Lu\303\255s-iPhone"; }"#
        #expect(
            DHCPLeases.parse(bytes(block)) == [
                Lease(
                    mac: mac("3c:22:fb:01:02:03"), address: ip("10.0.0.9"), hostName: "Luís-iPhone",
                    expires: 1_796_418_000)
            ])
    }

    @Test func otherEscapesAndStatesAndDates() {
        let file = #"""
            lease 10.0.0.1 { hardware ethernet 00:00:00:00:00:01; client-hostname "a\\b\x41\tc"; }
            lease 10.0.0.2 { binding state backup; hardware ethernet 00:00:00:00:00:02; }
            lease 10.0.0.3 { binding state abandoned; hardware ethernet 00:00:00:00:00:03; }
            lease 10.0.0.4 { binding state expired; hardware ethernet 00:00:00:00:00:04; }
            lease 10.0.0.5 { ends 5 2026/02/30 10:00:00; binding state active; hardware ethernet 00:00:00:00:00:05; }
            lease 10.0.0.6 { binding state active; hardware token-ring 00:00:00:00:00:06; }
            lease 10.0.0.7 { binding state active; hardware ethernet 00:00:00:00:00:07; on commit { set a = "}"; } }
            """#
        let leases = DHCPLeases.parse(bytes(file))
        #expect(leases.map(\.address) == [ip("10.0.0.1"), ip("10.0.0.5"), ip("10.0.0.7")])
        // No binding state (dhcpd 2) is held; `\\`, `\x41` and `\t` are undone.
        #expect(leases.first?.hostName == "a\\bA\tc")
        // 30 February is no date: the end is unknown, the lease still listed.
        #expect(leases[1].expires == nil)
    }

    @Test func aBlockTheFileEndsInsideIsDropped() {
        let file = """
            lease 192.168.1.100 {
              binding state active;
              hardware ethernet aa:bb:cc:dd:ee:ff;
            }
            lease 192.168.1.101 {
              binding state active;
              hardware ethernet aa:bb:cc:dd:ee:01;
              client-hostname "cut
            """
        #expect(DHCPLeases.parse(bytes(file)).map(\.address) == [ip("192.168.1.100")])
    }

    @Test func theHeaderCommentsAreNotTakenForOdhcpd() {
        let header = "# The format of this file is documented in the dhcpd.leases(5) manual page.\n"
        #expect(DHCPLeases.format(of: bytes(header)) == nil)
        #expect(DHCPLeases.format(of: bytes(header + "authoring-byte-order little-endian;\n")) == .iscDHCPD)
    }
}
