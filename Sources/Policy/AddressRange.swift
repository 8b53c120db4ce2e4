import DomainMatch

/// An IPv4 or IPv6 prefix (`192.168.0.0/16`, `fe80::/10`, or one address): what
/// `allow_clients` and profile client lists are made of.
public struct AddressRange: Hashable, Sendable, CustomStringConvertible {
    public let address: IPAddress
    public let prefixLength: Int

    /// `ADDR` or `ADDR/LEN`; nil when either part is not valid.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        let maximum = address.bitWidth
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...maximum).contains(length), parts[1].allSatisfy(\.isNumber) else {
                return nil
            }
            prefixLength = length
        } else {
            prefixLength = maximum
        }
        self.address = address
    }

    public init(address: IPAddress, prefixLength: Int) {
        self.address = address
        self.prefixLength = prefixLength
    }

    public func contains(_ candidate: IPAddress) -> Bool {
        switch (address, candidate.unmappedV4 ?? candidate) {
        case (.v4(let network), .v4(let value)):
            guard prefixLength > 0 else { return true }
            let mask = UInt32.max << UInt32(32 - prefixLength)
            return network & mask == value & mask
        case (.v6(let high, let low), .v6(let valueHigh, let valueLow)):
            let highBits = min(prefixLength, 64)
            let lowBits = max(0, prefixLength - 64)
            let highMask = highBits == 0 ? 0 : UInt64.max << UInt64(64 - highBits)
            let lowMask = lowBits == 0 ? 0 : UInt64.max << UInt64(64 - lowBits)
            return high & highMask == valueHigh & highMask && low & lowMask == valueLow & lowMask
        default:
            return false
        }
    }

    public var description: String { "\(address)/\(prefixLength)" }
}

extension IPAddress {
    var bitWidth: Int {
        if case .v4 = self { return 32 }
        return 128
    }

    /// The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`), which is
    /// how a dual-stack socket shows an IPv4 client.
    public var unmappedV4: IPAddress? {
        guard case .v6(let high, let low) = self, high == 0, low >> 32 == 0xFFFF else { return nil }
        return .v4(UInt32(truncatingIfNeeded: low))
    }
}

/// A set of ranges, e.g. `allow_clients` (docs/dns.md#who-is-answered).
public struct AccessList: Sendable {
    public let ranges: [AddressRange]

    public init(_ ranges: [AddressRange]) { self.ranges = ranges }

    /// Loopback, RFC 1918, 100.64/10, 169.254/16, fc00::/7, fe80::/10, plus `ownPrefixes`
    /// (the global IPv6 prefixes of the gateway's own interfaces).
    public static func defaultClients(ownPrefixes: [AddressRange] = []) -> AccessList {
        let texts = [
            "127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",
            "169.254.0.0/16", "fc00::/7", "fe80::/10",
        ]
        return AccessList(texts.compactMap(AddressRange.init) + ownPrefixes)
    }

    public func contains(_ address: IPAddress) -> Bool {
        ranges.contains { $0.contains(address) }
    }
}
