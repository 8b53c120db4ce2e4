/// A 48-bit link-layer (Ethernet, Wi-Fi) address, `aa:bb:cc:dd:ee:ff`: how a profile
/// recognises a device across its changing IP addresses (IPv6 privacy addresses above
/// all). Held in one integer, so hashing and comparing it allocate nothing.
public struct MACAddress: Hashable, Sendable, CustomStringConvertible {
    /// The six octets, the first in the high byte of the low 48 bits.
    public let value: UInt64

    public init(value: UInt64) { self.value = value & 0xFFFF_FFFF_FFFF }

    /// Exactly six octets.
    public init?(octets: some Collection<UInt8>) {
        guard octets.count == 6 else { return nil }
        value = octets.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Six pairs of hex digits separated by `:` or `-`, any case (`AA-BB-CC-DD-EE-FF`).
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 17 else { return nil }
        let separator = bytes[2]
        guard separator == UInt8(ascii: ":") || separator == UInt8(ascii: "-") else { return nil }
        var value: UInt64 = 0
        for group in 0..<6 {
            let start = group * 3
            if group > 0, bytes[start - 1] != separator { return nil }
            guard let high = bytes[start].hexDigitValue, let low = bytes[start + 1].hexDigitValue else { return nil }
            value = value << 8 | UInt64(high << 4 | low)
        }
        self.value = value
    }

    /// Lowercase, colon-separated.
    public var description: String {
        (0..<6).map { index in
            let octet = UInt8(truncatingIfNeeded: value >> (40 - 8 * UInt64(index)))
            let digits = String(octet, radix: 16)
            return octet < 16 ? "0" + digits : digits
        }.joined(separator: ":")
    }
}
