/// An IPv4 or IPv6 address, parsed strictly from text (no octal, no zone ids).
///
/// Used for IP entries in lists (docs/decisions.md#list-entries), `allow_clients` and client identity.
public enum IPAddress: Hashable, Sendable, CustomStringConvertible {
    case v4(UInt32)
    case v6(high: UInt64, low: UInt64)

    public init?(_ text: some StringProtocol) {
        if let v4 = IPAddress.parseV4(Array(text.utf8)) {
            self = .v4(v4)
        } else if let v6 = IPAddress.parseV6(Array(text.utf8)) {
            self = .v6(high: v6.0, low: v6.1)
        } else {
            return nil
        }
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

    static func parseV4(_ bytes: [UInt8]) -> UInt32? {
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

    static func parseV6(_ bytes: [UInt8]) -> (UInt64, UInt64)? {
        guard bytes.count >= 2, bytes.count <= 45 else { return nil }
        var head: [UInt16] = []
        var tail: [UInt16] = []
        var sawGap = false
        var index = 0
        if bytes.starts(with: [UInt8(ascii: ":"), UInt8(ascii: ":")]) {
            sawGap = true
            index = 2
        } else if bytes.first == UInt8(ascii: ":") {
            return nil
        }
        while index < bytes.count {
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: ":") { index += 1 }
            let piece = bytes[start..<index]
            if piece.contains(UInt8(ascii: ".")) {
                // Embedded IPv4 must be the last piece.
                guard index == bytes.count, let v4 = parseV4(Array(piece)) else { return nil }
                let pair = [UInt16(v4 >> 16), UInt16(v4 & 0xFFFF)]
                if sawGap { tail += pair } else { head += pair }
                break
            }
            guard !piece.isEmpty, piece.count <= 4,
                let group = UInt16(String(decoding: piece, as: UTF8.self), radix: 16)
            else { return nil }
            if sawGap { tail.append(group) } else { head.append(group) }
            if index == bytes.count { break }
            index += 1  // the ':'
            if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
                guard !sawGap else { return nil }
                sawGap = true
                index += 1
            } else if index == bytes.count {
                return nil  // a single trailing ':'
            }
        }
        let count = head.count + tail.count
        guard sawGap ? count <= 7 : count == 8 else { return nil }
        let groups = head + Array(repeating: 0, count: 8 - count) + tail
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<4 { high = high << 16 | UInt64(groups[index]) }
        for index in 4..<8 { low = low << 16 | UInt64(groups[index]) }
        return (high, low)
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
}
