/// An Extended DNS Error INFO-CODE (RFC 8914 §4, IANA "Extended DNS Error Codes").
public struct EDECode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let other = EDECode(0)
    public static let unsupportedDNSKEYAlgorithm = EDECode(1)
    public static let unsupportedDSDigestType = EDECode(2)
    /// Served from cache after the upstream failed (RFC 8767 serve-stale).
    public static let staleAnswer = EDECode(3)
    public static let forgedAnswer = EDECode(4)
    public static let dnssecIndeterminate = EDECode(5)
    public static let dnssecBogus = EDECode(6)
    public static let signatureExpired = EDECode(7)
    public static let signatureNotYetValid = EDECode(8)
    public static let dnskeyMissing = EDECode(9)
    public static let rrsigsMissing = EDECode(10)
    public static let noZoneKeyBitSet = EDECode(11)
    public static let nsecMissing = EDECode(12)
    public static let cachedError = EDECode(13)
    /// The server is starting up (e.g. block lists not loaded yet).
    public static let notReady = EDECode(14)
    /// Blocked by the operator's policy: the proxy's block answers (docs/dns.md#blocked-names).
    public static let blocked = EDECode(15)
    public static let censored = EDECode(16)
    public static let filtered = EDECode(17)
    public static let prohibited = EDECode(18)
    public static let staleNXDOMAINAnswer = EDECode(19)
    public static let notAuthoritative = EDECode(20)
    public static let notSupported = EDECode(21)
    /// Every upstream failed (the proxy's SERVFAIL).
    public static let noReachableAuthority = EDECode(22)
    public static let networkError = EDECode(23)
    public static let invalidData = EDECode(24)

    /// The RFC 8914 §4 name, `EDE<n>` for codes it does not name.
    public var description: String {
        switch rawValue {
        case 0: "Other Error"
        case 1: "Unsupported DNSKEY Algorithm"
        case 2: "Unsupported DS Digest Type"
        case 3: "Stale Answer"
        case 4: "Forged Answer"
        case 5: "DNSSEC Indeterminate"
        case 6: "DNSSEC Bogus"
        case 7: "Signature Expired"
        case 8: "Signature Not Yet Valid"
        case 9: "DNSKEY Missing"
        case 10: "RRSIGs Missing"
        case 11: "No Zone Key Bit Set"
        case 12: "NSEC Missing"
        case 13: "Cached Error"
        case 14: "Not Ready"
        case 15: "Blocked"
        case 16: "Censored"
        case 17: "Filtered"
        case 18: "Prohibited"
        case 19: "Stale NXDOMAIN Answer"
        case 20: "Not Authoritative"
        case 21: "Not Supported"
        case 22: "No Reachable Authority"
        case 23: "Network Error"
        case 24: "Invalid Data"
        default: "EDE\(rawValue)"
        }
    }
}

/// An Extended DNS Error (RFC 8914 §2): EDNS option 15, an INFO-CODE and optional UTF-8
/// EXTRA-TEXT for humans. It never changes the meaning of the rcode.
public struct ExtendedDNSError: Hashable, Sendable, CustomStringConvertible {
    public var code: EDECode
    public var text: String

    public init(code: EDECode, text: String = "") {
        self.code = code
        self.text = text
    }

    /// Parses option data. Text that is not valid UTF-8 is repaired with U+FFFD rather than
    /// rejected (§2: it is for display only), and trailing NULs, which some servers send
    /// despite §2, are dropped: all of them, so that the text written back by `option`
    /// parses to itself.
    public init(optionData data: [UInt8]) throws(DNSWireError) {
        guard data.count >= 2 else { throw .badExtendedError(length: data.count) }
        code = EDECode(UInt16(data[0]) << 8 | UInt16(data[1]))
        var textBytes = data[2...]
        while textBytes.last == 0 { textBytes = textBytes.dropLast() }
        text = String(decoding: textBytes, as: UTF8.self)
    }

    /// The EDNS option carrying this error (text not NUL-terminated, per §2).
    public var option: EDNSOption {
        EDNSOption(
            code: .extendedError, data: [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)] + Array(text.utf8))
    }

    /// `EDE 15 (Blocked): reason`, the form dig prints.
    public var description: String {
        "EDE \(code.rawValue) (\(code))" + (text.isEmpty ? "" : ": \(text)")
    }
}

extension EDNS {
    /// The Extended DNS Errors among the options, in order (RFC 8914 allows several).
    public func extendedErrors() throws(DNSWireError) -> [ExtendedDNSError] {
        var errors: [ExtendedDNSError] = []
        for option in options where option.code == .extendedError {
            errors.append(try ExtendedDNSError(optionData: option.data))
        }
        return errors
    }

    public mutating func addExtendedError(_ error: ExtendedDNSError) {
        options.append(error.option)
    }
}
