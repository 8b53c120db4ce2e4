import SystemIO

/// Text from outside made safe for a terminal: control characters (ESC, BEL, CR, LF, …),
/// DEL, C1 controls and the bidi controls written as visible `\u{…}`, so a name cannot
/// move the cursor, hide lines or read backwards.
enum TerminalText {
    static func safe(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.hidesText {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
