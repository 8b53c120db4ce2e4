/// What ties the table in the kernel to the configuration it was made from: `nft list`
/// prints a table in its own words (merged sets, reordered elements), never the text
/// `nft -f` read, so the text itself cannot be compared. Instead the table carries a
/// comment with a hash of the text it was made from, which `phosra-gate doctor` compares
/// with the hash of the text the configuration makes now (docs/doctor.md#firewall).
public enum TableFingerprint {
    static let prefix = "phosra-gate "

    /// FNV-1a (64 bits) of `text`, as 16 hex digits: no defence against anyone, a cheap
    /// and stable name for one exact table text.
    static func of(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The table's comment statement.
    static func line(_ fingerprint: String) -> String { "\tcomment \"\(prefix)\(fingerprint)\"" }

    /// The fingerprint in a table's text, as `nft -f` reads it or `nft list table` prints
    /// it; nil when it has none (a table written by hand or by an older phosra-gate).
    public static func find(in text: String) -> String? {
        for line in text.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count == 3, words[0] == "comment", words[1] == "\"phosra-gate", words[2].hasSuffix("\"")
            else { continue }
            let fingerprint = words[2].dropLast()
            guard fingerprint.count == 16, fingerprint.allSatisfy(\.isHexDigit) else { continue }
            return String(fingerprint)
        }
        return nil
    }
}
