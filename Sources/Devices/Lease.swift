import DomainMatch

/// One device the DHCP server has given an address: what the parent's page lists beside
/// the vendor of its MAC address.
///
/// `hostName` is the text the device sent (DHCP option 12, or what the server kept of
/// it), read raw: a child's device may put anything there (control characters, `<`,
/// quotes, bidirectional overrides), so **whoever displays it escapes it** for where it
/// goes (HTML, a terminal, JSON). It is only bounded here: at most
/// `DHCPLeases.maximumHostNameBytes` bytes of UTF-8, invalid sequences replaced by U+FFFD.
public struct Lease: Hashable, Sendable, CustomStringConvertible {
    public let mac: MACAddress
    /// The leased address; nil when the record names none the parser understands.
    public let address: IPAddress?
    /// Nil when the device sent none (dnsmasq's `*`, odhcpd's `-`, an empty field).
    public let hostName: String?
    /// When the lease ends, in seconds since the epoch (UTC); nil for a lease without end
    /// (dnsmasq's `0`, odhcpd's `-1`, dhcpd's `never`, Kea's infinite lifetime) or when the
    /// file does not say. It may be in the past: the caller compares it with its clock.
    public let expires: Int64?

    public init(mac: MACAddress, address: IPAddress?, hostName: String?, expires: Int64?) {
        self.mac = mac
        self.address = address
        self.hostName = hostName
        self.expires = expires
    }

    public var description: String {
        "\(mac) \(address.map(String.init(describing:)) ?? "-") \(hostName.map { "\($0.debugDescription)" } ?? "-")"
            + " \(expires.map(String.init) ?? "-")"
    }
}

/// The lease files `DHCPLeases` reads, told apart by their content.
public enum LeaseFileFormat: String, Sendable, CaseIterable {
    /// dnsmasq's `dnsmasq.leases` (and OpenWrt's `/tmp/dhcp.leases`, the same format):
    /// `expiry mac address hostname client-id` a line.
    case dnsmasq
    /// ISC dhcpd's `dhcpd.leases` (dhcpd.leases(5)): `lease ADDRESS { … }` blocks, appended.
    case iscDHCPD
    /// Kea's memfile CSV (`kea-leases4.csv`, `kea-leases6.csv`), with its header line.
    case kea
    /// OpenWrt odhcpd's state file (`option leasefile`): `# ifname id iaid|ipv4 …` lines.
    case odhcpd
}
