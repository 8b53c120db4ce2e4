import DomainMatch

/// How a blocked name is answered (docs/dns.md#blocked-names), any query type.
public enum BlockMode: Equatable, Sendable, CustomStringConvertible {
    /// NXDOMAIN with a synthetic SOA (the default).
    case nxdomain
    /// A `0.0.0.0`, AAAA `::`, NODATA for other types.
    case null
    /// REFUSED.
    case refused
    /// A with this address, AAAA with the second one (NODATA without it), NODATA otherwise.
    case address(v4: UInt32, v6: (high: UInt64, low: UInt64)?)

    /// `nxdomain`, `null`, `refused` or `ip:V4[,V6]`.
    public init?(_ text: String) {
        switch text.lowercased() {
        case "nxdomain": self = .nxdomain
        case "null": self = .null
        case "refused": self = .refused
        default:
            guard text.lowercased().hasPrefix("ip:") else { return nil }
            let parts = text.dropFirst(3).split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count <= 2, case .v4(let v4)? = IPAddress(parts[0]) else { return nil }
            var v6: (UInt64, UInt64)?
            if parts.count == 2 {
                guard case .v6(let high, let low)? = IPAddress(parts[1]) else { return nil }
                v6 = (high, low)
            }
            self = .address(v4: v4, v6: v6)
        }
    }

    public var description: String {
        switch self {
        case .nxdomain: return "nxdomain"
        case .null: return "null"
        case .refused: return "refused"
        case .address(let v4, let v6):
            return "ip:\(IPAddress.v4(v4))" + (v6.map { ",\(IPAddress.v6(high: $0.high, low: $0.low))" } ?? "")
        }
    }

    public static func == (lhs: BlockMode, rhs: BlockMode) -> Bool { lhs.description == rhs.description }
}
