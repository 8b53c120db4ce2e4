import EventLoop

/// A received header block, kept as its bytes plus where each field's name and value lie
/// (RFC 9112 §5): nothing is turned into a `String` unless asked for, and forwarding
/// copies the fields byte for byte, so obs-text in a value survives untouched.
///
/// Parsing rejects, cheapest check first: obsolete line folding, a line without a colon
/// or with white space before it, a name that is not a token, and control characters in
/// a value. Pure; never traps on any input.
public struct HeaderFields: Sendable {
    struct Field: Sendable {
        let name: Range<Int>
        let value: Range<Int>
    }

    /// The whole head: start line, fields and the empty line.
    public let bytes: [UInt8]
    /// The start line, without its line ending.
    let startLine: Range<Int>
    let fields: [Field]

    /// Splits `bytes` (a complete head, ending in the empty line) into the start line and fields.
    init(_ bytes: [UInt8]) throws(ProxyError) {
        self.bytes = bytes
        var lines: [Range<Int>] = []
        var start = 0
        for index in bytes.indices where bytes[index] == 0x0A {
            let end = index > start && bytes[index - 1] == 0x0D ? index - 1 : index
            lines.append(start..<end)
            start = index + 1
        }
        // The last line is the empty one that ended the head.
        guard let first = lines.first, lines.count >= 2, lines[lines.count - 1].isEmpty else {
            throw .malformedRequestLine
        }
        startLine = first
        var fields: [Field] = []
        fields.reserveCapacity(lines.count - 2)
        for (number, line) in lines.dropFirst().dropLast().enumerated() {
            fields.append(try Self.field(bytes, line, number: number + 1))
        }
        self.fields = fields
    }

    private static func field(_ bytes: [UInt8], _ line: Range<Int>, number: Int) throws(ProxyError) -> Field {
        // Obsolete line folding (a line starting with white space) is rejected, §5.2.
        guard let first = line.first, bytes[first] != 0x20, bytes[first] != 0x09,
              let colon = bytes[line].firstIndex(of: UInt8(ascii: ":")), colon > first else {
            throw .malformedHeader(line: number)
        }
        for index in first..<colon where !HTTPSyntax.isTokenByte(bytes[index]) { throw .malformedHeader(line: number) }
        var valueStart = colon + 1, valueEnd = line.upperBound
        while valueStart < valueEnd, bytes[valueStart] == 0x20 || bytes[valueStart] == 0x09 { valueStart += 1 }
        while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 { valueEnd -= 1 }
        for index in valueStart..<valueEnd {
            let byte = bytes[index]
            if (byte < 0x20 && byte != 0x09) || byte == 0x7F { throw .malformedHeader(line: number) }
        }
        return Field(name: first..<colon, value: valueStart..<valueEnd)
    }

    public var count: Int { fields.count }

    /// The value of the first field named `name` (ASCII case ignored).
    public func first(_ name: String) -> String? {
        fields.first { named($0, name) }.map { String(decoding: bytes[$0.value], as: UTF8.self) }
    }

    /// Every value of the fields named `name`, in order.
    public func all(_ name: String) -> [String] {
        fields.filter { named($0, name) }.map { String(decoding: bytes[$0.value], as: UTF8.self) }
    }

    /// The comma-separated members of every `name` field, trimmed and lowercased
    /// (`Connection: close, Upgrade` → ["close", "upgrade"]).
    public func tokens(_ name: String) -> [String] {
        all(name).flatMap { $0.split(separator: ",") }.map { HTTPSyntax.trimmed($0).lowercased() }.filter { !$0.isEmpty }
    }

    /// Appends every field `keep` accepts to `out`, as `name: value` lines.
    func write(to out: inout ByteBuffer, keeping keep: (String) -> Bool) {
        for field in fields {
            let name = String(decoding: bytes[field.name], as: UTF8.self).lowercased()
            guard keep(name) else { continue }
            bytes.withUnsafeBytes { raw in
                out.writeBytes(UnsafeRawBufferPointer(rebasing: raw[field.name]))
                out.writeString(": ")
                out.writeBytes(UnsafeRawBufferPointer(rebasing: raw[field.value]))
            }
            out.writeString("\r\n")
        }
    }

    private func named(_ field: Field, _ name: String) -> Bool {
        guard field.name.count == name.utf8.count else { return false }
        return zip(bytes[field.name], name.utf8).allSatisfy { HTTPSyntax.lower($0) == HTTPSyntax.lower($1) }
    }
}
