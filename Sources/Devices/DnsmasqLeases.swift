/// dnsmasq's lease file (`--dhcp-leasefile`; Debian `/var/lib/misc/dnsmasq.leases`,
/// OpenWrt `/tmp/dhcp.leases`), one lease a line:
///
///     1765015200 aa:bb:cc:dd:ee:ff 192.168.1.23 Pixel-7 01:aa:bb:cc:dd:ee:ff
///
/// expiry (seconds since the epoch, `0` for a lease without end), hardware address,
/// address, host name (`*` for none), client id (`*` for none). A hardware address that is
/// not Ethernet's is written `TT-…` with its ARP type first. After a `duid …` line come
/// the DHCPv6 leases, whose second field is an IAID (`T` before it for a temporary
/// address) rather than a MAC address: they are skipped, as is any line that does not
/// parse. A dnsmasq built with HAVE_BROKEN_RTC writes a lease's length in the first
/// field instead; that cannot be told from the file, and such a length reads as a time
/// in 1970.
enum DnsmasqLeases {
    static func parse(_ bytes: [UInt8]) -> [Lease] { LeaseTable.leases(bytes, lease) }

    static func lease(_ bytes: [UInt8], _ line: Range<Int>) -> Lease? {
        // dnsmasq always writes five fields: fewer is a line cut short (dnsmasq rewrites the
        // file in place, so a reader can see half of it), its host name maybe cut too.
        guard let fields = LeaseText.fields(bytes, line), fields.count == 5,
            let expiry = LeaseText.integer(bytes, fields[0]), expiry >= 0,
            let mac = LeaseText.mac(bytes, fields[1]),
            let address = LeaseText.address(bytes, fields[2])
        else { return nil }
        let name = LeaseText.equals(bytes, fields[3], "*") ? nil : LeaseText.hostName(bytes[fields[3]])
        return Lease(mac: mac, address: address, hostName: name, expires: expiry == 0 ? nil : expiry)
    }

    /// Whether `line` looks like one of dnsmasq's: decides the format of a file.
    static func isLeaseLine(_ bytes: [UInt8], _ line: Range<Int>) -> Bool {
        guard let fields = LeaseText.fields(bytes, line), let first = fields.first else { return false }
        if LeaseText.equals(bytes, first, "duid") { return fields.count == 2 }
        return fields.count == 5 && LeaseText.integer(bytes, first) != nil
    }
}
