// The presentation form of names (RFC 1035 §5.1, RFC 4343 §2.1) for logs, tests and
// configuration. Never on the hot path: the proxy matches on wire bytes.

extension DNSName {
    /// Parses a dotted name such as `www.example.com` or `www.example.com.` (the trailing dot
    /// is optional: every name here is absolute). `""` and `"."` are the root.
    ///
    /// `\.` puts a dot inside a label, `\\` a backslash, `\DDD` (three decimal digits, ≤ 255)
    /// any byte; other bytes, including non-ASCII UTF-8, are taken as they are. Errors carry
    /// a UTF-8 offset into `text`.
    public init(_ text: some StringProtocol) throws(DNSWireError) {
        let utf8 = Array(text.utf8)
        var wire: [UInt8] = [0]
        wire.reserveCapacity(utf8.count + 2)
        var labelStart = 0
        var index = 0

        func closeLabel(at offset: Int) throws(DNSWireError) {
            let length = wire.count - labelStart - 1
            guard length > 0 else { throw .emptyLabel(offset: offset) }
            guard length <= 63 else { throw .labelTooLong(offset: offset) }
            wire[labelStart] = UInt8(length)
            labelStart = wire.count
            wire.append(0)
        }

        if utf8 == [0x2E] { index = 1 }  // "." alone is the root
        while index < utf8.count {
            let byte = utf8[index]
            if byte == 0x2E {
                try closeLabel(at: index)
                index += 1
                continue
            }
            if byte == 0x5C {
                guard index + 1 < utf8.count else { throw .badEscape(offset: index) }
                let next = utf8[index + 1]
                if next &- 0x30 < 10 {
                    guard index + 3 < utf8.count, utf8[index + 2] &- 0x30 < 10, utf8[index + 3] &- 0x30 < 10
                    else { throw .badEscape(offset: index) }
                    let value = Int(next - 0x30) * 100 + Int(utf8[index + 2] - 0x30) * 10 + Int(utf8[index + 3] - 0x30)
                    guard value <= 255 else { throw .badEscape(offset: index) }
                    wire.append(UInt8(value))
                    index += 4
                } else {
                    wire.append(next)
                    index += 2
                }
                continue
            }
            wire.append(byte)
            index += 1
        }
        if wire.count > labelStart + 1 { try closeLabel(at: utf8.count) }
        guard wire.count <= 255 else { throw .nameTooLong(offset: 0) }
        self.init(trustedWire: wire)
    }

    /// The dotted form for logs, without the trailing dot (the root is `.`).
    ///
    /// Bytes outside printable ASCII become `\DDD`; `.` inside a label becomes `\.`, and `\`
    /// and `"` are escaped too, so the text parses back to the same wire name.
    public var presentation: String {
        guard !isRoot else { return "." }
        var text: [UInt8] = []
        text.reserveCapacity(wire.count + 8)
        for label in labels {
            if !text.isEmpty { text.append(0x2E) }
            for byte in label {
                switch byte {
                case 0x2E, 0x5C, 0x22:
                    text.append(0x5C)
                    text.append(byte)
                case 0x21...0x7E:
                    text.append(byte)
                default:
                    text.append(0x5C)
                    text.append(0x30 + byte / 100)
                    text.append(0x30 + byte / 10 % 10)
                    text.append(0x30 + byte % 10)
                }
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
