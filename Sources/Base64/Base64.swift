/// Base64 with the standard alphabet (RFC 4648 §4), strict: a text decodes only when it
/// is the one encoding of its bytes. No white space, no line breaks, no other alphabet;
/// with padding exactly the `=` the length needs, without padding none; and the unused
/// low bits of the last character are zero (§3.5), so two texts never decode to the same
/// bytes. Credentials (`Proxy-Authorization: Basic`, RFC 7617) and stored password hashes
/// are read with it, where a lenient decoder would accept what no client ever sent. Pure.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The value of each byte of the alphabet; 0xFF for every other byte.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// `bytes` in base64; `padded: false` leaves out the trailing `=` (as the PHC string
    /// format of password hashes does).
    public static func encode(_ bytes: some Collection<UInt8>, padded: Bool = true) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = second == nil ? nil : iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            out.append(alphabet[Int(group >> 18 & 63)])
            out.append(alphabet[Int(group >> 12 & 63)])
            if second != nil { out.append(alphabet[Int(group >> 6 & 63)]) } else if padded { out.append(0x3D) }
            if third != nil { out.append(alphabet[Int(group & 63)]) } else if padded { out.append(0x3D) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `text` encodes, or nil when it is not canonical base64 of the form asked
    /// for (padded: a multiple of 4 characters, ending in at most two `=`; unpadded: no
    /// `=`, and never 4n+1 characters). The empty text is the empty byte string.
    public static func decode(_ text: some Collection<UInt8>, padded: Bool = true) -> [UInt8]? {
        var characters = Array(text)[...]
        if padded {
            guard characters.count % 4 == 0 else { return nil }
            if characters.last == 0x3D { characters = characters.dropLast() }
            if characters.last == 0x3D { characters = characters.dropLast() }
        }
        let tail = characters.count % 4
        guard tail != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(characters.count * 3 / 4)
        var group: UInt32 = 0
        var count = 0
        for character in characters {
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            group = group << 6 | UInt32(value)
            count += 1
            if count == 4 {
                out.append(UInt8(group >> 16 & 0xFF))
                out.append(UInt8(group >> 8 & 0xFF))
                out.append(UInt8(group & 0xFF))
                group = 0
                count = 0
            }
        }
        switch tail {
        case 2:
            // 12 bits for one byte: the low 4 must be zero.
            guard group & 0xF == 0 else { return nil }
            out.append(UInt8(group >> 4 & 0xFF))
        case 3:
            // 18 bits for two bytes: the low 2 must be zero.
            guard group & 0x3 == 0 else { return nil }
            out.append(UInt8(group >> 10 & 0xFF))
            out.append(UInt8(group >> 2 & 0xFF))
        default: break
        }
        return out
    }
}
