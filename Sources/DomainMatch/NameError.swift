/// Why a query name or list entry is not a usable host name (docs/decisions.md#names).
public enum NameError: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case tooLong(octets: Int)
    case emptyLabel
    case labelTooLong(octets: Int)
    case invalidCharacter(Unicode.Scalar)
    /// A non-ASCII label whose punycode form cannot be computed (RFC 3492 overflow).
    case punycodeOverflow

    public var description: String {
        switch self {
        case .empty: return "empty name"
        case .tooLong(let octets): return "name is \(octets) octets long (at most 253)"
        case .emptyLabel: return "empty label"
        case .labelTooLong(let octets): return "label is \(octets) octets long (at most 63)"
        case .invalidCharacter(let scalar):
            let shown =
                scalar.properties.isWhitespace || scalar.value < 0x20
                ? "U+" + String(scalar.value, radix: 16, uppercase: true)
                : "'\(Character(scalar))'"
            return "character \(shown) is not allowed (letters, digits, '-' and '_' only)"
        case .punycodeOverflow: return "label cannot be converted to punycode"
        }
    }
}
