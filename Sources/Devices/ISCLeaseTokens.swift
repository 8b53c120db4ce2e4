/// The tokens of dhcpd's lease file (dhcpd.leases(5), the lexer of dhcpd.conf(5)): words,
/// quoted strings, `{`, `}` and `;`; `#` starts a comment outside a string. Read one at a
/// time, so a large file is never held twice.
struct ISCLeaseTokens {
    enum Token: Equatable {
        case word(Range<Int>)
        /// A quoted string with its escapes undone: `\"`, `\\`, `\t`, `\n`, `\r`, `\b`,
        /// octal `\303` (up to three digits), hex `\xc3` (up to two). Only the first
        /// `maximumStringBytes` bytes are kept.
        case string([UInt8])
        case open
        case close
        case semicolon
    }

    /// More than any host name keeps (`DHCPLeases.maximumHostNameBytes`), with room to cut
    /// it at a character boundary.
    static let maximumStringBytes = 1024

    let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next token; nil at the end, or inside a string the file ends before closing.
    mutating func next() -> Token? {
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                index += 1
            case UInt8(ascii: "#"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "{"):
                index += 1
                return .open
            case UInt8(ascii: "}"):
                index += 1
                return .close
            case UInt8(ascii: ";"):
                index += 1
                return .semicolon
            case UInt8(ascii: "\""):
                index += 1
                return string()
            default:
                let start = index
                while index < bytes.count, !Self.endsWord(bytes[index]) { index += 1 }
                return .word(start..<index)
            }
        }
        return nil
    }

    private static func endsWord(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "{"),
            UInt8(ascii: "}"), UInt8(ascii: ";"), UInt8(ascii: "\""), UInt8(ascii: "#"):
            true
        default: false
        }
    }

    private mutating func string() -> Token? {
        var text: [UInt8] = []
        func keep(_ byte: UInt8) { if text.count < Self.maximumStringBytes { text.append(byte) } }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { return .string(text) }
            guard byte == UInt8(ascii: "\\"), index < bytes.count else {
                keep(byte)
                continue
            }
            let escaped = bytes[index]
            index += 1
            switch escaped {
            case UInt8(ascii: "t"): keep(UInt8(ascii: "\t"))
            case UInt8(ascii: "n"): keep(UInt8(ascii: "\n"))
            case UInt8(ascii: "r"): keep(UInt8(ascii: "\r"))
            case UInt8(ascii: "b"): keep(0x08)
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var value = UInt32(escaped - UInt8(ascii: "0"))
                var digits = 1
                while digits < 3, index < bytes.count, bytes[index] >= UInt8(ascii: "0"),
                    bytes[index] <= UInt8(ascii: "7")
                {
                    value = value * 8 + UInt32(bytes[index] - UInt8(ascii: "0"))
                    digits += 1
                    index += 1
                }
                keep(UInt8(truncatingIfNeeded: value))
            case UInt8(ascii: "x"):
                var value: UInt8 = 0
                var digits = 0
                while digits < 2, index < bytes.count, let digit = bytes[index].hexNibble {
                    value = value << 4 | digit
                    digits += 1
                    index += 1
                }
                keep(value)
            default: keep(escaped)
            }
        }
        return nil
    }

    func equals(_ token: Token, _ word: StaticString) -> Bool {
        guard case .word(let range) = token else { return false }
        return LeaseText.equals(bytes, range, word)
    }

}
