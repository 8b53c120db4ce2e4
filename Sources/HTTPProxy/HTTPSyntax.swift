import EventLoop

/// Small pieces of RFC 9110/9112 syntax shared by the parsers.
enum HTTPSyntax {
    /// tchar (RFC 9110 §5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
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

    static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    /// Where a head ends in `buffer`: the index just past the empty line (CRLF CRLF, or
    /// bare LFs, RFC 9112 §2.2), searching from `from` (an absolute index; callers pass
    /// where the last search stopped, less three bytes, so no byte is scanned twice).
    static func headEnd(in buffer: ByteBuffer, from: Int) -> Int? {
        buffer.withUnsafeReadableBytes { bytes -> Int? in
            var index = max(from - buffer.readerIndex, 0)
            while index < bytes.count {
                guard let newline = bytes[index...].firstIndex(of: 0x0A) else { return nil }
                let next = newline + 1
                if next < bytes.count, bytes[next] == 0x0A { return buffer.readerIndex + next + 1 }
                if next + 1 < bytes.count, bytes[next] == 0x0D, bytes[next + 1] == 0x0A {
                    return buffer.readerIndex + next + 2
                }
                index = next
            }
            return nil
        }
    }
}
