/// A response code (RFC 1035 §4.1.1, IANA "DNS RCODEs").
///
/// Twelve bits wide: the low four live in the header, the high eight in the OPT record's
/// TTL field (RFC 6891 §6.1.3). `DNSHeader.rcode` holds only the low four bits;
/// `DNSMessage.rcode` combines both.
public struct DNSRcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let noError = DNSRcode(0)
    public static let formErr = DNSRcode(1)
    public static let servFail = DNSRcode(2)
    public static let nxDomain = DNSRcode(3)
    public static let notImp = DNSRcode(4)
    public static let refused = DNSRcode(5)
    public static let yxDomain = DNSRcode(6)
    public static let yxRRSet = DNSRcode(7)
    public static let nxRRSet = DNSRcode(8)
    public static let notAuth = DNSRcode(9)
    public static let notZone = DNSRcode(10)
    /// RFC 6891 §9: the client's EDNS version is not supported. Needs an OPT record.
    public static let badVers = DNSRcode(16)
    /// RFC 7873 §8. Needs an OPT record.
    public static let badCookie = DNSRcode(23)

    public var description: String {
        switch rawValue {
        case 0: "NOERROR"
        case 1: "FORMERR"
        case 2: "SERVFAIL"
        case 3: "NXDOMAIN"
        case 4: "NOTIMP"
        case 5: "REFUSED"
        case 6: "YXDOMAIN"
        case 7: "YXRRSET"
        case 8: "NXRRSET"
        case 9: "NOTAUTH"
        case 10: "NOTZONE"
        case 16: "BADVERS"
        case 23: "BADCOOKIE"
        default: "RCODE\(rawValue)"
        }
    }
}

/// The 4-bit OPCODE of the header (RFC 1035 §4.1.1, IANA "DNS OpCodes"). The proxy serves
/// only `query` and answers the rest NOTIMP (docs/dns.md#hostile-input).
public struct DNSOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let query = DNSOpcode(0)
    public static let iquery = DNSOpcode(1)
    public static let status = DNSOpcode(2)
    public static let notify = DNSOpcode(4)
    public static let update = DNSOpcode(5)
    /// DNS Stateful Operations (RFC 8490).
    public static let dso = DNSOpcode(6)

    public var description: String {
        switch rawValue {
        case 0: "QUERY"
        case 1: "IQUERY"
        case 2: "STATUS"
        case 4: "NOTIFY"
        case 5: "UPDATE"
        case 6: "DSO"
        default: "OPCODE\(rawValue)"
        }
    }
}
