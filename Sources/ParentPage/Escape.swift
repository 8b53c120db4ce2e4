import HTTP1
import SystemIO

/// Text from outside (query names, device and DHCP host names, proxy users, notes) made
/// safe where it is written. Every value the page did not write itself goes through one
/// of these, at the moment it is written: never stored escaped, never written raw.
enum Escape {
    /// For HTML text and quoted attribute values: `&`, `<`, `>`, `"`, `'` as entities;
    /// control characters and the Unicode bidi controls (which can make a name read
    /// backwards, U+202A–202E, U+2066–2069, U+200E, U+200F, U+061C) as visible `\u{…}`.
    static func html(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                if scalar.hidesText {
                    out += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// A JSON string literal, quotes included. Besides what JSON requires, `<`, `>`, `&`,
    /// `'`, U+2028, U+2029 and the bidi controls are written as `\u` escapes, so the text
    /// stays inert even if a browser sniffs it as HTML or a script embeds it.
    static func json(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<", ">", "&", "'", "\u{2028}", "\u{2029}": out += unicodeEscape(scalar.value)
            default:
                if scalar.value < 0x20 || scalar.hidesText {
                    out += unicodeEscape(scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A path segment or query value for a link the page writes (`/profiles/<name>`).
    static func url(_ text: String) -> String { PercentEncoding.component(text) }

    private static func unicodeEscape(_ value: UInt32) -> String {
        if value > 0xFFFF {
            // Outside the BMP: a surrogate pair, as JSON spells it.
            let offset = value - 0x10000
            return unicodeEscape(0xD800 + (offset >> 10)) + unicodeEscape(0xDC00 + (offset & 0x3FF))
        }
        let hex = String(value, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}
