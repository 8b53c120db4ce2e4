/// Small pieces of RFC 9110/9112 syntax shared by the parsers and by whoever writes heads.
public enum HTTPSyntax {
    /// tchar (RFC 9110 §5.6.2): what method names and field names are made of.
    public static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// A non-empty run of tchar (a method, a field name).
    public static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    /// Space or horizontal tab: optional white space (OWS, RFC 9110 §5.6.3).
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// ASCII lowercase of one byte; others unchanged.
    static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// At most 60 bytes of `bytes`, control bytes as "?", for an error message.
    public static func printable(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: bytes.prefix(60).map { $0 < 0x20 || $0 == 0x7F ? UInt8(ascii: "?") : $0 }, as: UTF8.self)
    }
}
