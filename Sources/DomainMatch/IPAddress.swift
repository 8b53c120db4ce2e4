/// An IPv4 or IPv6 address, parsed strictly from text (no octal, no zone ids).
///
/// Used for IP entries in lists (docs/decisions.md#list-entries), `allow_clients` and client identity.
public enum IPAddress: Hashable, Sendable, CustomStringConvertible {
    case v4(UInt32)
    case v6(high: UInt64, low: UInt64)

    /// Parsed in place from the text's bytes: the proxy tries every CONNECT target as an
    /// address before it tries it as a name, so a name must be refused without a copy.
    public init?(_ text: some StringProtocol) {
        let parsed =
            text.utf8.withContiguousStorageIfAvailable { IPAddress.parse($0) }
            ?? Array(text.utf8).withUnsafeBufferPointer { IPAddress.parse($0) }
        guard let parsed else { return nil }
        self = parsed
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> IPAddress? {
        if let v4 = parseV4(bytes) { return .v4(v4) }
        // Every IPv6 form has a colon; names and IPv4 attempts stop here.
        guard bytes.contains(UInt8(ascii: ":")), let v6 = parseV6(bytes) else { return nil }
        return .v6(high: v6.0, low: v6.1)
    }

    public init(v6Bytes bytes: [UInt8]) {
        precondition(bytes.count == 16)
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<8 { high = high << 8 | UInt64(bytes[index]) }
        for index in 8..<16 { low = low << 8 | UInt64(bytes[index]) }
        self = .v6(high: high, low: low)
    }

    /// Canonical text: dotted quad, or RFC 5952 for IPv6.
    public var description: String {
        switch self {
        case .v4(let value):
            return (0..<4).map { String((value >> (24 - 8 * UInt32($0))) & 0xFF) }.joined(separator: ".")
        case .v6(let high, let low):
            let groups = (0..<8).map { index -> UInt16 in
                let word = index < 4 ? high : low
                return UInt16(truncatingIfNeeded: word >> (48 - 16 * UInt64(index % 4)))
            }
            return IPAddress.formatV6(groups)
        }
    }

    static func parseV4(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        var parts = 0
        var index = 0
        while index <= bytes.count {
            var digits = 0
            var part: UInt32 = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                // No leading zeros: `010` would be octal to inet_aton and decimal to us.
                if digits == 1, part == 0 { return nil }
                part = part * 10 + UInt32(bytes[index] - UInt8(ascii: "0"))
                digits += 1
                guard digits <= 3, part <= 255 else { return nil }
                index += 1
            }
            guard digits > 0 else { return nil }
            value = value << 8 | part
            parts += 1
            if index == bytes.count { break }
            guard bytes[index] == UInt8(ascii: "."), parts < 4 else { return nil }
            index += 1
        }
        return parts == 4 ? value : nil
    }

    static func parseV6(_ bytes: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64)? {
        guard bytes.count >= 2, bytes.count <= 45 else { return nil }
        var groups = V6Groups()
        var index = 0
        if bytes[0] == UInt8(ascii: ":") {
            guard bytes[1] == UInt8(ascii: ":") else { return nil }
            groups.sawGap = true
            index = 2
        }
        while index < bytes.count {
            let start = index
            var dotted = false
            while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
                if bytes[index] == UInt8(ascii: ".") { dotted = true }
                index += 1
            }
            if dotted {
                // Embedded IPv4 must be the last piece.
                guard index == bytes.count,
                    let v4 = parseV4(UnsafeBufferPointer(rebasing: bytes[start..<index]))
                else { return nil }
                groups.append(UInt16(v4 >> 16))
                groups.append(UInt16(v4 & 0xFFFF))
                break
            }
            guard index > start, index - start <= 4, let group = hexGroup(bytes, start..<index) else { return nil }
            groups.append(group)
            if index == bytes.count { break }
            index += 1  // the ':'
            if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
                guard !groups.sawGap else { return nil }
                groups.sawGap = true
                index += 1
            } else if index == bytes.count {
                return nil  // a single trailing ':'
            }
            guard groups.count <= 8 else { return nil }
        }
        return groups.address
    }

    /// The groups of an IPv6 text as they are read: those before the gap (`::`) fill from
    /// the front, those after it are shifted in from the back, and the gap is the zeros
    /// between.
    private struct V6Groups {
        var head: (high: UInt64, low: UInt64) = (0, 0)
        var tail: (high: UInt64, low: UInt64) = (0, 0)
        var headCount = 0
        var tailCount = 0
        var sawGap = false

        var count: Int { headCount + tailCount }

        mutating func append(_ group: UInt16) {
            if sawGap {
                tail = (tail.high << 16 | tail.low >> 48, tail.low << 16 | UInt64(group))
                tailCount += 1
            } else {
                head = (head.high << 16 | head.low >> 48, head.low << 16 | UInt64(group))
                headCount += 1
            }
        }

        /// The address, or nil when the groups and the gap do not make eight.
        var address: (UInt64, UInt64)? {
            guard sawGap ? count <= 7 : count == 8 else { return nil }
            // The head's groups move up past the gap and the tail's: 16 bits a group.
            let front = IPAddress.shifted(head, by: 8 - headCount)
            return (front.high | tail.high, front.low | tail.low)
        }
    }

    /// A 128-bit value (two halves) shifted left by `groups` 16-bit groups (0...8).
    private static func shifted(_ value: (high: UInt64, low: UInt64), by groups: Int) -> (high: UInt64, low: UInt64) {
        switch groups {
        case 0: return value
        case 8...: return (0, 0)
        case 4...: return (value.low << UInt64(16 * (groups - 4)), 0)
        default:
            let bits = UInt64(16 * groups)
            return (value.high << bits | value.low >> (64 - bits), value.low << bits)
        }
    }

    /// One to four hexadecimal digits.
    private static func hexGroup(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt16? {
        var value: UInt16 = 0
        for index in range {
            guard let digit = bytes[index].hexDigitValue else { return nil }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    private static func formatV6(_ groups: [UInt16]) -> String {
        // The longest run of two or more zero groups becomes "::" (RFC 5952 §4.2).
        var bestStart = -1
        var bestLength = 1
        var runStart = -1
        for index in 0...8 {
            if index < 8, groups[index] == 0 {
                if runStart < 0 { runStart = index }
            } else if runStart >= 0 {
                if index - runStart > bestLength {
                    bestStart = runStart
                    bestLength = index - runStart
                }
                runStart = -1
            }
        }
        func hex(_ range: Range<Int>) -> String {
            groups[range].map { String($0, radix: 16) }.joined(separator: ":")
        }
        guard bestStart >= 0 else { return hex(0..<8) }
        return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
    }
}

extension IPAddress {
    /// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as the IPv4 address it reaches;
    /// any other address as it is.
    public var unmapped: IPAddress {
        if case .v6(0, let low) = self, low >> 32 == 0xFFFF { return .v4(UInt32(truncatingIfNeeded: low)) }
        return self
    }

    /// Loopback (127/8, ::1), mapped IPv4 included: a source no other host can send from,
    /// since the kernel drops such a packet arriving on any interface but `lo`.
    public var isLoopback: Bool {
        switch unmapped {
        case .v4(let bits): bits >> 24 == 127
        case .v6(let high, let low): high == 0 && low == 1
        }
    }

    /// Loopback (127/8, ::1), unspecified (0/8, ::: a connection to it reaches this host)
    /// or link-local (169.254/16, fe80::/10), mapped IPv4 included: an address that means
    /// this machine or its link, never a site.
    public var isHostOrLinkScoped: Bool {
        switch unmapped {
        case .v4(let bits):
            return bits >> 24 == 127 || bits >> 24 == 0 || bits >> 16 == 0xA9FE
        case .v6(let high, let low):
            return (high == 0 && (low == 0 || low == 1)) || high >> 54 == 0x3FA
        }
    }

    /// A private network's address, mapped IPv4 included: RFC 1918 (10/8, 172.16/12,
    /// 192.168/16), shared address space (100.64/10, RFC 6598: a carrier's NAT or an overlay
    /// network such as Tailscale), unique-local (fc00::/7, RFC 4193) and the deprecated
    /// site-local (fec0::/10). Never a public site's address, so a public name answering one
    /// is DNS rebinding (docs/dns.md#what-answers-may-carry).
    public var isPrivateUse: Bool {
        switch unmapped {
        case .v4(let bits):
            return bits >> 24 == 10 || bits >> 20 == 0xAC1 || bits >> 16 == 0xC0A8 || bits >> 22 == 0x191
        case .v6(let high, _):
            return high >> 57 == 0x7E || high >> 54 == 0x3FB
        }
    }
}
