import SystemIO

/// Why a lease file could not be read. The OUI registry has no error: a missing or
/// unreadable registry means no vendors (`VendorLookup`).
public enum DevicesError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Opening or reading the file failed.
    case unreadable(path: String, SystemError)
    /// The file is larger than `DHCPLeases.maximumFileBytes`; nothing of it was parsed.
    case tooLarge(path: String, limit: Int)

    public var description: String {
        switch self {
        case .unreadable(let path, let error): "cannot read the lease file \(path): \(error.reason)"
        case .tooLarge(let path, let limit): "the lease file \(path) is larger than \(limit) bytes"
        }
    }
}
