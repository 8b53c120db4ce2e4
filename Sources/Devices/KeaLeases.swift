/// Kea's memfile lease files (`/var/lib/kea/kea-leases4.csv`, `kea-leases6.csv`): a
/// header line naming the columns, then one lease a line, appended as leases change:
///
///     address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,user_context,pool_id
///     192.168.1.23,aa:bb:cc:dd:ee:ff,01:aa:bb:cc:dd:ee:ff,3600,1765015200,1,0,0,laptop,0,,0
///
/// Columns are found by name, so older and newer schemas (and the DHCPv6 file, which has
/// `hwaddr` too) read alike. No quoting: a comma or a byte outside printable ASCII in a
/// value is written `&#x` and two hex digits (Kea 1.9.3 on). The last line for an address
/// wins; a line with `valid_lifetime` 0 is a deleted lease, and only `state` 0 (default)
/// is a lease held (1 declined, 2 expired-reclaimed, 3 released, 4 registered). A
/// delegated prefix (`lease_type` 2) is not a device's address: skipped. A line whose
/// column count is not the header's is malformed: skipped.
enum KeaLeases {
    static let comma = UInt8(ascii: ",")
    /// Kea's infinite lifetime (0xffffffff): the lease has no end.
    static let infiniteLifetime: Int64 = 4_294_967_295

    struct Columns {
        var count = 0
        var address: Int?
        var hwaddr: Int?
        var validLifetime: Int?
        var expire: Int?
        var hostname: Int?
        var state: Int?
        var leaseType: Int?

        init?(_ bytes: [UInt8], _ fields: [Range<Int>]) {
            count = fields.count
            for (index, field) in fields.enumerated() {
                switch String(decoding: bytes[field], as: UTF8.self) {
                case "address": address = index
                case "hwaddr": hwaddr = index
                case "valid_lifetime": validLifetime = index
                case "expire": expire = index
                case "hostname": hostname = index
                case "state": state = index
                case "lease_type": leaseType = index
                default: break
                }
            }
            guard address != nil, hwaddr != nil else { return nil }
        }
    }

    static func parse(_ bytes: [UInt8]) -> [Lease] {
        var table = LeaseTable()
        var columns: Columns?
        LeaseText.forEachLine(bytes) { line in
            guard let fields = LeaseText.fields(bytes, line, separator: comma, limit: 64) else { return true }
            if LeaseText.hasPrefix(bytes, line, "address,") {
                columns = Columns(bytes, fields)
            } else if let columns, fields.count == columns.count {
                record(bytes, fields, columns, into: &table)
            }
            return true
        }
        return table.leases
    }

    static func record(_ bytes: [UInt8], _ fields: [Range<Int>], _ columns: Columns, into table: inout LeaseTable) {
        guard let addressColumn = columns.address, let hwaddrColumn = columns.hwaddr,
            let address = LeaseText.address(bytes, fields[addressColumn])
        else { return }
        if let column = columns.leaseType, !LeaseText.equals(bytes, fields[column], "0"),
            !LeaseText.equals(bytes, fields[column], "1")
        {
            return
        }
        let lifetime = columns.validLifetime.flatMap { LeaseText.integer(bytes, fields[$0]) }
        let held = columns.state.map { LeaseText.equals(bytes, fields[$0], "0") } ?? true
        // A declined lease has no hardware address, yet still ends the address's last lease.
        guard held, lifetime != 0, let mac = LeaseText.mac(bytes, fields[hwaddrColumn]) else {
            table.record(.address(address), nil)
            return
        }
        let expire =
            lifetime == infiniteLifetime ? nil : columns.expire.flatMap { LeaseText.integer(bytes, fields[$0]) }
        let name = columns.hostname.flatMap { LeaseText.hostName(unescaped(bytes, fields[$0])) }
        table.record(Lease(mac: mac, address: address, hostName: name, expires: expire))
    }

    /// A value with Kea's `&#xHH` escapes undone; a tag not followed by two hex digits is
    /// kept as it is, as Kea does. Reads at most what a host name can use.
    static func unescaped(_ bytes: [UInt8], _ range: Range<Int>) -> [UInt8] {
        var result: [UInt8] = []
        var index = range.lowerBound
        while index < range.upperBound, result.count <= DHCPLeases.maximumHostNameBytes {
            if index + 5 <= range.upperBound, LeaseText.hasPrefix(bytes, index..<range.upperBound, "&#x"),
                let high = bytes[index + 3].hexNibble, let low = bytes[index + 4].hexNibble
            {
                result.append(high << 4 | low)
                index += 5
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }
}
