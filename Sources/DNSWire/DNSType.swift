/// A record TYPE or question QTYPE (RFC 1035 §3.2.2–3.2.3, IANA "Resource Record (RR) TYPEs").
///
/// A struct, not an enum, so every one of the 65,536 values survives a round trip
/// (RFC 3597 §2); the named constants are the ones the proxy and its logs care about.
public struct DNSType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let a = DNSType(1)
    public static let ns = DNSType(2)
    public static let cname = DNSType(5)
    public static let soa = DNSType(6)
    public static let ptr = DNSType(12)
    public static let hinfo = DNSType(13)
    public static let mx = DNSType(15)
    public static let txt = DNSType(16)
    public static let aaaa = DNSType(28)
    public static let srv = DNSType(33)
    public static let naptr = DNSType(35)
    public static let dname = DNSType(39)
    public static let opt = DNSType(41)
    public static let ds = DNSType(43)
    public static let rrsig = DNSType(46)
    public static let nsec = DNSType(47)
    public static let dnskey = DNSType(48)
    public static let nsec3 = DNSType(50)
    public static let nsec3param = DNSType(51)
    public static let cds = DNSType(59)
    public static let cdnskey = DNSType(60)
    public static let svcb = DNSType(64)
    public static let https = DNSType(65)
    public static let ixfr = DNSType(251)
    public static let axfr = DNSType(252)
    /// QTYPE `*` (RFC 1035 §3.2.3; RFC 8482 lets a server answer it minimally).
    public static let any = DNSType(255)
    public static let caa = DNSType(257)

    /// Mnemonic for logs; unnamed values use the RFC 3597 §5 form `TYPE1234`.
    public var description: String {
        switch rawValue {
        case 1: "A"
        case 2: "NS"
        case 5: "CNAME"
        case 6: "SOA"
        case 12: "PTR"
        case 13: "HINFO"
        case 15: "MX"
        case 16: "TXT"
        case 28: "AAAA"
        case 33: "SRV"
        case 35: "NAPTR"
        case 39: "DNAME"
        case 41: "OPT"
        case 43: "DS"
        case 46: "RRSIG"
        case 47: "NSEC"
        case 48: "DNSKEY"
        case 50: "NSEC3"
        case 51: "NSEC3PARAM"
        case 59: "CDS"
        case 60: "CDNSKEY"
        case 64: "SVCB"
        case 65: "HTTPS"
        case 251: "IXFR"
        case 252: "AXFR"
        case 255: "ANY"
        case 257: "CAA"
        default: "TYPE\(rawValue)"
        }
    }

    /// The types of DNSSEC itself (RFC 4034, 5155, 7344): keys, delegation signers,
    /// signatures and denial proofs, which a validator asks for to prove a zone signed or
    /// unsigned.
    public var isDNSSEC: Bool {
        switch rawValue {
        case 43, 46, 47, 48, 50, 51, 59, 60: true
        default: false
        }
    }
}

/// A record CLASS or QCLASS (RFC 1035 §3.2.4–3.2.5). Only IN matters to the proxy; the
/// others are named so logs and tests read well.
public struct DNSClass: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let `in` = DNSClass(1)
    public static let chaos = DNSClass(3)
    public static let hesiod = DNSClass(4)
    /// RFC 2136 §1.3: used by UPDATE to mean "no such RR".
    public static let none = DNSClass(254)
    public static let any = DNSClass(255)

    /// Mnemonic for logs; unnamed values use the RFC 3597 §5 form `CLASS1234`.
    public var description: String {
        switch rawValue {
        case 1: "IN"
        case 3: "CH"
        case 4: "HS"
        case 254: "NONE"
        case 255: "ANY"
        default: "CLASS\(rawValue)"
        }
    }
}
