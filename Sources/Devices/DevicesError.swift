import SystemIO

/// Why a lease file could not be read. The OUI registry has no error: a missing or
/// unreadable registry means no vendors (`VendorLookup`).
public enum DevicesError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Opening or reading the file failed.
    case unreadable(path: String, SystemError)
    /// The file is larger than `DHCPLeases.maximumFileBytes`; nothing of it was parsed.
    case tooLarge(path: String, limit: Int)
    /// The file has lines, but in none of the formats `DHCPLeases.format(of:)` knows.
    case unrecognised(path: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let error): "cannot read the lease file \(path): \(error.reason)"
        case .tooLarge(let path, let limit): "the lease file \(path) is larger than \(limit) bytes"
        case .unrecognised(let path):
            "\(path) is not a lease file of dnsmasq, ISC dhcpd, Kea or odhcpd"
        }
    }
}
