import DomainMatch

/// OpenWrt odhcpd's state file (`option leasefile` in `/etc/config/dhcp`, such as
/// `/tmp/odhcpd.leases`), one `#` line a lease, from odhcpd's source (its statefile
/// writer), no manual page describing it:
///
///     # br-lan 0001000128a1b2c3aabbccddeeff 1a2b3c4d phone 1765015200 1234 128 fd00::1234/128
///     # br-lan aa:bb:cc:dd:ee:ff ipv4 laptop 1765015200 c0a80117 32 192.168.1.23/32
///
/// interface, client id, IAID or `ipv4`, host name (`-` for none, `broken\x20` before one
/// odhcpd found invalid), end of the lease (seconds since the epoch, `-1` for none, `0`
/// once it has run out), the assigned id or address in hex, the prefix length, the
/// addresses. A DHCPv6 lease names its client by DUID, not by MAC address: skipped. A
/// DHCPv4 lease names it by MAC address: twelve hex digits together before 2025, then
/// `ether_ntoa`'s form (`aa:bb:…` with musl, `0:1b:…` with glibc). Lines without `#` are
/// host entries (`address<TAB>name`) that older odhcpd wrote into the same file, and
/// `/tmp/hosts/odhcpd*` holds only those: they carry no MAC address and are skipped.
enum ODHCPDLeases {
    static let brokenMark: StaticString = "broken\\x20"

    static func parse(_ bytes: [UInt8]) -> [Lease] { LeaseTable.leases(bytes, lease) }

    static func lease(_ bytes: [UInt8], _ line: Range<Int>) -> Lease? {
        guard let fields = LeaseText.fields(bytes, line), fields.count >= 8,
            LeaseText.equals(bytes, fields[0], "#"), LeaseText.equals(bytes, fields[3], "ipv4"),
            let mac = LeaseText.mac(bytes, fields[2])
        else { return nil }
        // Read from the right: a broken host name may hold spaces. The line ends
        // `<end> <hex address> 32 <address>/32`, or `… 32` once the lease has run out.
        let last = fields.count - 1
        let length = LeaseText.equals(bytes, fields[last], "32") ? last : last - 1
        guard length >= 7, LeaseText.equals(bytes, fields[length], "32"),
            let hexAddress = LeaseText.hex(bytes, fields[length - 1]), hexAddress <= UInt64(UInt32.max),
            let end = LeaseText.integer(bytes, fields[length - 2]), end >= -1
        else { return nil }
        var address = IPAddress.v4(UInt32(hexAddress))
        if length < last {
            let text = fields[last]
            guard text.count > 3, LeaseText.equals(bytes, text.upperBound - 3..<text.upperBound, "/32"),
                let dotted = LeaseText.address(bytes, text.lowerBound..<text.upperBound - 3)
            else { return nil }
            address = dotted
        }
        var name = fields[4].lowerBound..<fields[length - 3].upperBound
        if LeaseText.hasPrefix(bytes, name, brokenMark) {
            name = name.lowerBound + brokenMark.utf8CodeUnitCount..<name.upperBound
        }
        let hostName = LeaseText.equals(bytes, name, "-") ? nil : LeaseText.hostName(bytes[name])
        return Lease(mac: mac, address: address, hostName: hostName, expires: end == -1 ? nil : end)
    }

    /// Whether `line` looks like one of odhcpd's lease lines, DHCPv4 or DHCPv6: decides the
    /// format of a file (a comment line of another format has words, not hex, in its
    /// third and fourth fields).
    static func isLeaseLine(_ bytes: [UInt8], _ line: Range<Int>) -> Bool {
        guard let fields = LeaseText.fields(bytes, line, limit: 64), fields.count >= 8,
            LeaseText.equals(bytes, fields[0], "#")
        else { return false }
        if LeaseText.equals(bytes, fields[3], "ipv4") { return LeaseText.mac(bytes, fields[2]) != nil }
        return fields[2].count.isMultiple(of: 2) && fields[2].allSatisfy { bytes[$0].hexNibble != nil }
            && LeaseText.hex(bytes, fields[3]) != nil
    }
}
