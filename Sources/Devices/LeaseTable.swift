import DomainMatch

/// The leases of one file as its records are read: a later record for the same address
/// replaces the earlier one (dhcpd and Kea append to their files, so the last record is
/// the current one), a record that ends a lease (dhcpd's `free`, Kea's deletion) removes
/// it, and at most `DHCPLeases.maximumLeases` addresses are kept.
struct LeaseTable {
    enum Key: Hashable {
        case address(IPAddress)
        case mac(MACAddress)
    }

    private var order: [Key] = []
    private var current: [Key: Lease?] = [:]

    /// `lease` nil: the address is no longer leased.
    mutating func record(_ key: Key, _ lease: Lease?) {
        if current.index(forKey: key) == nil {
            // A bound on what a hostile file can make us hold; later addresses are dropped.
            guard order.count < DHCPLeases.maximumLeases else { return }
            order.append(key)
        }
        current[key] = .some(lease)
    }

    mutating func record(_ lease: Lease) {
        record(lease.address.map(Key.address) ?? .mac(lease.mac), lease)
    }

    /// The current leases, in the order their addresses first appeared.
    var leases: [Lease] { order.compactMap { current[$0] ?? nil } }

    /// The leases of a file whose every line stands alone: `lease` reads one line (nil:
    /// not a lease), later lines winning as `record` has it.
    static func leases(_ bytes: [UInt8], _ lease: ([UInt8], Range<Int>) -> Lease?) -> [Lease] {
        var table = LeaseTable()
        LeaseText.forEachLine(bytes) { line in
            if let found = lease(bytes, line) { table.record(found) }
            return true
        }
        return table.leases
    }
}
