import Glibc
import SystemIO

/// The leases in a DHCP server's lease file: the devices on the network, with the name
/// each gave. Pure parsers over the file's bytes; `read(path:)` is the only I/O, a
/// blocking read for the page's handler (never on an event loop).
///
/// Bounds, against a damaged or hostile file: `read` refuses a file over
/// `maximumFileBytes`; a parse keeps at most `maximumLeases` addresses (later ones are
/// dropped) and at most `maximumHostNameBytes` of each host name. A line or block that
/// does not parse is skipped; nothing traps.
public enum DHCPLeases {
    /// 16 MiB: a home network's lease file is a few kilobytes (dnsmasq allows 1,000 leases
    /// by default, about 100 bytes each); dhcpd's and Kea's grow between rewrites, hourly.
    public static let maximumFileBytes = 16 << 20
    /// More devices than a home has; what a page can list.
    public static let maximumLeases = 4096
    /// A DNS name's longest text form (RFC 1035 §2.3.4, 255 octets on the wire).
    public static let maximumHostNameBytes = 253

    /// The leases in `bytes`, in whichever format `format(of:)` finds; none when it finds none.
    public static func parse(_ bytes: [UInt8]) -> [Lease] {
        guard let format = format(of: bytes) else { return [] }
        return parse(bytes, as: format)
    }

    public static func parse(_ bytes: [UInt8], as format: LeaseFileFormat) -> [Lease] {
        switch format {
        case .dnsmasq: DnsmasqLeases.parse(bytes)
        case .iscDHCPD: ISCLeases.parse(bytes)
        case .kea: KeaLeases.parse(bytes)
        case .odhcpd: ODHCPDLeases.parse(bytes)
        }
    }

    /// The format of a lease file, from the first line that only one format writes: Kea's
    /// header (its first line), a top-level statement of dhcpd (`lease … {`,
    /// `authoring-byte-order`, `server-duid`, …), one of odhcpd's `#` lease lines, or one
    /// of dnsmasq's lines (a number and three more fields, or `duid`). Blank lines,
    /// comments and lines of none of these are passed over. Nil for an empty file, or one
    /// with no such line.
    public static func format(of bytes: [UInt8]) -> LeaseFileFormat? {
        var found: LeaseFileFormat?
        var first = true
        LeaseText.forEachLine(bytes) { line in
            guard let start = line.first(where: { bytes[$0] != LeaseText.space && bytes[$0] != LeaseText.tab })
            else { return true }
            let text = start..<line.upperBound
            defer { first = false }
            if first, LeaseText.hasPrefix(bytes, text, "address,") {
                found = .kea
            } else if ISCLeases.isStatementLine(bytes, text) {
                found = .iscDHCPD
            } else if bytes[start] == UInt8(ascii: "#") {
                if ODHCPDLeases.isLeaseLine(bytes, text) { found = .odhcpd }
            } else if DnsmasqLeases.isLeaseLine(bytes, text) {
                found = .dnsmasq
            }
            return found == nil
        }
        return found
    }

    /// The leases in the file at `path` (`/var/lib/misc/dnsmasq.leases`,
    /// `/tmp/dhcp.leases`, `/var/lib/dhcp/dhcpd.leases`, `/var/lib/kea/kea-leases4.csv`,
    /// odhcpd's `leasefile`). Blocking; a file over `maximumFileBytes` is refused whole
    /// rather than read in part, since dhcpd and Kea append and the current leases are last.
    /// A file with lines of no known format (not blank, not a `#` comment) is
    /// `.unrecognised`: most likely `dhcp_leases` names the wrong file. An empty one, or a
    /// fresh dhcpd file with only its header comments, has no leases.
    public static func read(path: String) throws(DevicesError) -> [Lease] {
        let bytes: [UInt8]
        do {
            bytes = try Files.read(path, limit: maximumFileBytes)
        } catch {
            if error.errno == EFBIG { throw .tooLarge(path: path, limit: maximumFileBytes) }
            throw .unreadable(path: path, error)
        }
        guard let format = format(of: bytes) else {
            if hasContent(bytes) { throw .unrecognised(path: path) }
            return []
        }
        return parse(bytes, as: format)
    }

    /// Whether a line of `bytes` is neither blank nor a `#` comment.
    static func hasContent(_ bytes: [UInt8]) -> Bool {
        var found = false
        LeaseText.forEachLine(bytes) { line in
            let first = line.first { bytes[$0] != LeaseText.space && bytes[$0] != LeaseText.tab }
            found = first.map { bytes[$0] != UInt8(ascii: "#") } ?? false
            return !found
        }
        return found
    }
}
