/// Query-name normalisation for text names: `check`, CONNECT hosts, URL hosts and list
/// entries (docs/decisions.md#names).
///
/// Lowercase ASCII; drop one trailing dot; U+3002, U+FF0E and U+FF61 are dots; non-ASCII
/// letters lowercased by the standard library and each non-ASCII label converted to
/// punycode, with no further Unicode mapping (`Bücher.de` → `xn--bcher-kva.de`).
public enum QueryName {
    /// The longest name, in octets without the trailing dot.
    public static let maxOctets = 253
    public static let maxLabelOctets = 63

    public static func parse(_ text: String) throws(NameError) -> DomainName {
        if let fast = try parseASCII(text.utf8) { return fast }
        return try parseUnicode(text)
    }

    /// Fast path for plain ASCII input, which is nearly every list line: no `String`
    /// work at all. Returns nil when the input has non-ASCII bytes.
    static func parseASCII(_ utf8: some Collection<UInt8>) throws(NameError) -> DomainName? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        for byte in utf8 {
            guard byte < 0x80 else { return nil }
            bytes.append(byte.asciiLowercased)
        }
        return try validate(bytes)
    }

    private static func parseUnicode(_ text: String) throws(NameError) -> DomainName {
        var mapped = ""
        mapped.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x3002, 0xFF0E, 0xFF61: mapped.unicodeScalars.append(".")
            default: mapped.unicodeScalars.append(scalar)
            }
        }
        let lowered = mapped.lowercased()
        var bytes: [UInt8] = []
        var label: [UInt32] = []
        func flush() throws(NameError) {
            if label.contains(where: { $0 >= 0x80 }) {
                guard let encoded = Punycode.encode(label) else { throw .punycodeOverflow }
                bytes.append(contentsOf: Array("xn--".utf8) + encoded)
            } else {
                bytes.append(contentsOf: label.map { UInt8($0) })
            }
            label.removeAll(keepingCapacity: true)
        }
        for scalar in lowered.unicodeScalars {
            // Non-ASCII letters, marks and digits only: a symbol or a no-break space
            // would otherwise hide inside a valid-looking xn-- label.
            if scalar.value >= 0x80, !isLetterMarkOrDigit(scalar) { throw .invalidCharacter(scalar) }
            if scalar == "." {
                try flush()
                bytes.append(UInt8(ascii: "."))
            } else {
                label.append(scalar.value)
            }
        }
        try flush()
        return try validate(bytes)
    }

    /// Checks an ASCII lowercase candidate against the rules of docs/decisions.md#names.
    static func validate(_ input: [UInt8]) throws(NameError) -> DomainName {
        var bytes = input
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        guard !bytes.isEmpty else { throw .empty }
        var labelStart = 0
        for index in 0...bytes.count {
            guard index == bytes.count || bytes[index] == UInt8(ascii: ".") else { continue }
            let length = index - labelStart
            guard length > 0 else { throw .emptyLabel }
            guard length <= maxLabelOctets else { throw .labelTooLong(octets: length) }
            for byte in bytes[labelStart..<index] where !isHostByte(byte) {
                throw .invalidCharacter(Unicode.Scalar(byte))
            }
            labelStart = index + 1
        }
        guard bytes.count <= maxOctets else { throw .tooLong(octets: bytes.count) }
        return DomainName(validatedBytes: bytes)
    }

    private static func isLetterMarkOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark,
            .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }

    /// Letters, digits, `-` and `_` (underscores occur in real DNS names).
    @inline(__always)
    static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
