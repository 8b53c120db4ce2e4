/// The RDATA of a record, by type.
///
/// Types whose RDATA holds names that may be compressed on the wire (NS, CNAME, PTR, DNAME,
/// MX, SOA, SRV — RFC 3597 §4 — and the SVCB/HTTPS TargetName) are decoded, so a parsed
/// message can be written again at other offsets. A and AAAA are kept as their raw 4 and 16
/// bytes, inline (no allocation); TXT and every other type as raw bytes (RFC 3597).
///
/// `.unknown` also carries records the parser declines to interpret: any type with an
/// empty RDATA in class NONE or ANY (RFC 2136 UPDATE), and A/AAAA outside class IN, whose
/// RDATA is not an address. A hand-made `.unknown` with a known type is written as given.
public enum RData: Hashable, Sendable, CustomStringConvertible {
    case a(IPv4)
    case aaaa(IPv6)
    case ns(DNSName)
    case cname(DNSName)
    case ptr(DNSName)
    case dname(DNSName)
    case mx(MX)
    case soa(SOA)
    case srv(SRV)
    /// Raw RDATA: one or more <character-string>s (RFC 1035 §3.3.14).
    case txt([UInt8])
    case svcb(SVCB)
    case https(SVCB)
    case unknown(type: DNSType, bytes: [UInt8])

    public var type: DNSType {
        switch self {
        case .a: .a
        case .aaaa: .aaaa
        case .ns: .ns
        case .cname: .cname
        case .ptr: .ptr
        case .dname: .dname
        case .mx: .mx
        case .soa: .soa
        case .srv: .srv
        case .txt: .txt
        case .svcb: .svcb
        case .https: .https
        case .unknown(let type, _): type
        }
    }

    /// An IPv4 address as its 4 network-order bytes packed into a `UInt32`.
    public struct IPv4: Hashable, Sendable, CustomStringConvertible {
        public var value: UInt32
        public init(_ value: UInt32) { self.value = value }
        public init(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
            value = UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d)
        }
        /// Octet 0…3 in network order.
        public func octet(_ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(index))) }
        public var description: String { "\(octet(0)).\(octet(1)).\(octet(2)).\(octet(3))" }
    }

    /// An IPv6 address as its 16 network-order bytes in two `UInt64`s.
    public struct IPv6: Hashable, Sendable, CustomStringConvertible {
        public var high: UInt64
        public var low: UInt64
        public init(high: UInt64, low: UInt64) {
            self.high = high
            self.low = low
        }
        /// 16-bit group 0…7 in network order.
        public func group(_ index: Int) -> UInt16 {
            let word = index < 4 ? high : low
            return UInt16(truncatingIfNeeded: word >> (48 - 16 * UInt64(index % 4)))
        }
        /// RFC 5952 §4 text: lowercase hex, the longest run of two or more zero groups as `::`.
        public var description: String {
            var bestStart = -1
            var bestLength = 1
            var runStart = -1
            for index in 0...8 {
                if index < 8, group(index) == 0 {
                    if runStart < 0 { runStart = index }
                } else if runStart >= 0 {
                    if index - runStart > bestLength { (bestStart, bestLength) = (runStart, index - runStart) }
                    runStart = -1
                }
            }
            var text = ""
            var index = 0
            while index < 8 {
                if index == bestStart {
                    text += "::"
                    index += bestLength
                    continue
                }
                if !text.isEmpty, !text.hasSuffix(":") { text += ":" }
                text += String(group(index), radix: 16)
                index += 1
            }
            return text
        }
    }

    /// RFC 1035 §3.3.9.
    public struct MX: Hashable, Sendable {
        public var preference: UInt16
        public var exchange: DNSName
        public init(preference: UInt16, exchange: DNSName) {
            self.preference = preference
            self.exchange = exchange
        }
    }

    /// RFC 1035 §3.3.13. For negative caching, `minimum` caps the TTL (RFC 2308 §5).
    public struct SOA: Hashable, Sendable {
        public var mname: DNSName
        public var rname: DNSName
        public var serial: UInt32
        public var refresh: UInt32
        public var retry: UInt32
        public var expire: UInt32
        public var minimum: UInt32
        public init(
            mname: DNSName, rname: DNSName, serial: UInt32, refresh: UInt32, retry: UInt32, expire: UInt32,
            minimum: UInt32
        ) {
            (self.mname, self.rname, self.serial) = (mname, rname, serial)
            (self.refresh, self.retry, self.expire, self.minimum) = (refresh, retry, expire, minimum)
        }
    }

    /// RFC 2782. The target is never compressed when written.
    public struct SRV: Hashable, Sendable {
        public var priority: UInt16
        public var weight: UInt16
        public var port: UInt16
        public var target: DNSName
        public init(priority: UInt16, weight: UInt16, port: UInt16, target: DNSName) {
            (self.priority, self.weight, self.port, self.target) = (priority, weight, port, target)
        }
    }
}
