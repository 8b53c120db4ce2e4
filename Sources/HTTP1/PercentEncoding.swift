/// Percent-encoding for a URL a gateway writes (RFC 3986 §2.1): every byte but the
/// unreserved ones (letters, digits, `-._~`) as `%XX`, so a value is safe as a path segment
/// or a query value (the parent's links, the block page's link to the child's page).
public enum PercentEncoding {
    public static func component(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
