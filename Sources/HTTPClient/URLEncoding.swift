/// Percent-encoding (RFC 3986 §2.1) for the parts of a URL this client builds.
enum URLEncoding {
    /// ALPHA / DIGIT / "-" / "." / "_" / "~" (RFC 3986 §2.3).
    static let unreservedBytes: Set<UInt8> = {
        var bytes = Set<UInt8>()
        for byte in UInt8(ascii: "a")...UInt8(ascii: "z") { bytes.insert(byte) }
        for byte in UInt8(ascii: "A")...UInt8(ascii: "Z") { bytes.insert(byte) }
        for byte in UInt8(ascii: "0")...UInt8(ascii: "9") { bytes.insert(byte) }
        for byte in "-._~".utf8 { bytes.insert(byte) }
        return bytes
    }()

    /// pchar and "/": unreserved, sub-delims, ":" and "@" (RFC 3986 §3.3).
    static let pathBytes: Set<UInt8> = unreservedBytes.union("!$&'()*+,;=:@/".utf8)

    /// The query also allows "?" (RFC 3986 §3.4).
    static let queryBytes: Set<UInt8> = pathBytes.union("?".utf8)

    /// `text` with every byte outside `keeping` (and every "%") written as %XX.
    static func encode(_ text: String, keeping allowed: Set<UInt8>) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if allowed.contains(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// True when `text` holds only `allowed` bytes and well-formed %XX escapes.
    static func isValid(_ text: Substring, allowing allowed: Set<UInt8>) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHex(bytes[index + 1]), isHex(bytes[index + 2]) else { return false }
                index += 3
            } else {
                guard allowed.contains(bytes[index]) else { return false }
                index += 1
            }
        }
        return true
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
