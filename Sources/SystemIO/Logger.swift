import Glibc

/// One line per event on stderr (journald; a file of the test's for a daemon run in its
/// process), as `key=value` pairs or one JSON object (`log_format`). A line is one
/// `write`, so lines from several threads never mix.
/// Never give it a device key or a parent token.
public struct Logger: Sendable {
    public enum Format: String, CaseIterable, Sendable { case keyvalue, json }

    public let format: Format
    /// Where the lines go: stderr, or a file of a daemon run in a test's process.
    public let descriptor: Int32

    public init(format: Format = .keyvalue, descriptor: Int32 = 2) {
        self.format = format
        self.descriptor = descriptor
    }

    /// `level` (`info`, `warn`, `error`), an event name, and fields in order.
    public func log(_ level: String, _ event: String, _ fields: [(String, String)] = []) {
        var line: String
        switch format {
        case .keyvalue:
            line = "level=\(level) event=\(event)"
            for (key, value) in fields { line += " \(key)=\(Logger.quoted(value))" }
        case .json:
            line = "{\"level\":\(Logger.json(level)),\"event\":\(Logger.json(event))"
            for (key, value) in fields { line += ",\(Logger.json(key)):\(Logger.json(value))" }
            line += "}"
        }
        line += "\n"
        var bytes = Array(line.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    public func info(_ event: String, _ fields: [(String, String)] = []) { log("info", event, fields) }
    public func warn(_ event: String, _ fields: [(String, String)] = []) { log("warn", event, fields) }
    public func error(_ event: String, _ fields: [(String, String)] = []) { log("error", event, fields) }

    /// Bare when it is one word of safe characters, else in double quotes with escapes.
    static func quoted(_ value: String) -> String {
        let safe =
            !value.isEmpty
            && value.unicodeScalars.allSatisfy {
                $0.isASCII && $0.value > 0x20 && $0 != "\"" && $0 != "=" && $0 != "\\"
            }
        return safe ? value : json(value)
    }

    /// `value` as a JSON string literal, quotes included.
    public static func json(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.hidesText {
                    // Controls, and the bidi characters that would reorder a terminal's line.
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
