/// Text from outside made safe for a terminal: control characters (ESC, BEL, CR, LF, …),
/// DEL, C1 controls and the bidi controls written as visible `\u{…}`, so a name cannot
/// move the cursor, hide lines or read backwards.
enum TerminalText {
    static func safe(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0..<0x20, 0x7F..<0xA0, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
