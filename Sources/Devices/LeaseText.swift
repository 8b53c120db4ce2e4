import DomainMatch

/// Byte-level helpers the lease parsers share. Every range is into the file's bytes and
/// every function is total: short or odd input gives nil or nothing, never a trap.
enum LeaseText {
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let newline = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")

    /// Calls `body` with each line (without its `\n` or a `\r` before it) until it returns false.
    static func forEachLine(_ bytes: [UInt8], _ body: (Range<Int>) -> Bool) {
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != newline { end += 1 }
            let next = end + 1
            if end > start, bytes[end - 1] == carriageReturn { end -= 1 }
            if !body(start..<end) { return }
            start = next
        }
    }

    /// The fields of `line` split on `separator` (nil: runs of spaces and tabs). Nil when
    /// there are more than `limit`: no lease line has that many, so it is not one.
    static func fields(
        _ bytes: [UInt8], _ line: Range<Int>, separator: UInt8? = nil, limit: Int = 32
    ) -> [Range<Int>]? {
        var fields: [Range<Int>] = []
        var index = line.lowerBound
        if let separator {
            var start = index
            while index <= line.upperBound {
                if index == line.upperBound || bytes[index] == separator {
                    guard fields.count < limit else { return nil }
                    fields.append(start..<index)
                    start = index + 1
                }
                index += 1
            }
            return fields
        }
        while index < line.upperBound {
            while index < line.upperBound, bytes[index] == space || bytes[index] == tab { index += 1 }
            let start = index
            while index < line.upperBound, bytes[index] != space, bytes[index] != tab { index += 1 }
            if index > start {
                guard fields.count < limit else { return nil }
                fields.append(start..<index)
            }
        }
        return fields
    }

    static func equals(_ bytes: [UInt8], _ range: Range<Int>, _ word: StaticString) -> Bool {
        guard range.count == word.utf8CodeUnitCount else { return false }
        return word.withUTF8Buffer { zip(bytes[range], $0).allSatisfy { $0 == $1 } }
    }

    static func hasPrefix(_ bytes: [UInt8], _ range: Range<Int>, _ word: StaticString) -> Bool {
        guard range.count >= word.utf8CodeUnitCount else { return false }
        return word.withUTF8Buffer { zip(bytes[range], $0).allSatisfy { $0 == $1 } }
    }

    /// A decimal integer, optionally negative, of at most 18 digits.
    static func integer(_ bytes: [UInt8], _ range: Range<Int>) -> Int64? {
        var index = range.lowerBound
        let negative = index < range.upperBound && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < range.upperBound, range.upperBound - index <= 18 else { return nil }
        var value: Int64 = 0
        while index < range.upperBound {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
            index += 1
        }
        return negative ? -value : value
    }

    /// A hexadecimal number of 1 to 16 digits.
    static func hex(_ bytes: [UInt8], _ range: Range<Int>) -> UInt64? {
        guard !range.isEmpty, range.count <= 16 else { return nil }
        var value: UInt64 = 0
        for index in range {
            guard let digit = bytes[index].hexNibble else { return nil }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    static func address(_ bytes: [UInt8], _ range: Range<Int>) -> IPAddress? {
        guard !range.isEmpty, range.count <= 45 else { return nil }
        return IPAddress(String(decoding: bytes[range], as: UTF8.self))
    }

    /// A MAC address as the servers write one: six groups of one or two hex digits split
    /// by `:` or `-` (dhcpd's grammar allows `0:1c:…`; glibc's ether_ntoa writes it so),
    /// or twelve hex digits together (odhcpd before 2025). Anything else (a longer
    /// hardware address, a DHCPv6 IAID) is nil.
    static func mac(_ bytes: [UInt8], _ range: Range<Int>) -> MACAddress? {
        if range.count == 12 {
            guard let value = hex(bytes, range) else { return nil }
            return MACAddress(value: value)
        }
        guard range.count >= 11, range.count <= 17 else { return nil }
        var value: UInt64 = 0
        var groups = 0
        var digits = 0
        var group: UInt64 = 0
        for index in range {
            let byte = bytes[index]
            if let digit = byte.hexNibble {
                digits += 1
                guard digits <= 2 else { return nil }
                group = group << 4 | UInt64(digit)
            } else if byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-") {
                guard digits > 0, groups < 5 else { return nil }
                value = value << 8 | group
                groups += 1
                digits = 0
                group = 0
            } else {
                return nil
            }
        }
        guard digits > 0, groups == 5 else { return nil }
        return MACAddress(value: value << 8 | group)
    }

    /// A host name as the device sent it, bounded: at most `limit` bytes of UTF-8 (cut at
    /// a character boundary), invalid sequences replaced by U+FFFD. Nil when empty.
    /// Nothing is escaped: whoever displays the name does that.
    static func hostName(_ raw: some Collection<UInt8>, limit: Int = DHCPLeases.maximumHostNameBytes) -> String? {
        var head = Array(raw.prefix(limit + 1))
        if head.count > limit {
            // Step back over continuation bytes (10xxxxxx) so the cut falls between characters.
            var cut = limit
            while cut > 0, limit - cut < 3, head[cut] & 0xC0 == 0x80 { cut -= 1 }
            head.removeSubrange(cut...)
        }
        var text = String(decoding: head, as: UTF8.self)
        // A replacement character is 3 bytes where the bad byte was 1: the text can grow.
        while text.utf8.count > limit { text.unicodeScalars.removeLast() }
        return text.isEmpty ? nil : text
    }
}

extension UInt8 {
    /// The value of a hexadecimal digit in either case, or nil.
    var hexNibble: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
