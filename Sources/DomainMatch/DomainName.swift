/// A DNS name as the matcher sees it: lowercase bytes in dotted form, no trailing dot.
///
/// Built once at the boundary (`QueryName.parse` for text, `init(wireLabels:)` for the DNS
/// wire) so nothing downstream re-checks or re-lowercases. Labels are counted from the
/// right: `suffix(labels: 2)` of `www.example.com` is `example.com`.
public struct DomainName: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Lowercase name bytes, labels joined by `.`; never empty, never a trailing dot.
    public let bytes: [UInt8]
    /// Number of labels (dots + 1).
    public let labelCount: Int

    /// Wraps bytes already known to be a lowercase dotted name (no empty labels).
    /// Callers outside this module go through `QueryName.parse` or `init(wireLabels:)`.
    init(validatedBytes: [UInt8]) {
        bytes = validatedBytes
        var dots = 0
        for byte in validatedBytes where byte == UInt8(ascii: ".") { dots += 1 }
        labelCount = dots + 1
    }

    /// A name from the DNS wire: decided on its lowercased bytes, never rejected for its
    /// characters (docs/decisions.md#names). Returns nil only for the root name (no labels).
    public init?(wireLabels labels: [[UInt8]]) {
        guard !labels.isEmpty else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(labels.reduce(labels.count) { $0 + $1.count })
        for (index, label) in labels.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ".")) }
            for byte in label { out.append(byte.asciiLowercased) }
        }
        self.init(validatedBytes: out)
    }

    /// The name as text, in the master-file presentation form of RFC 1035 §5.1
    /// (`presentation(of:)`). Names made from text (`QueryName.parse`) never need escaping.
    public var description: String { Self.presentation(of: bytes) }

    /// Name bytes as text in the master-file presentation form of RFC 1035 §5.1: a byte
    /// outside printable ASCII as `\DDD` (decimal), and `"`, `(`, `)`, `;`, `@`, `$` and
    /// `\` behind a backslash. A name from the wire may carry any byte; as text it never
    /// carries a control byte, an escape sequence or a line break to a terminal, a log or
    /// a report.
    public static func presentation(of bytes: some Collection<UInt8>) -> String {
        guard bytes.contains(where: needsEscape) else { return String(decoding: bytes, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            if byte < 0x21 || byte > 0x7E {
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "0") + byte / 100)
                out.append(UInt8(ascii: "0") + byte / 10 % 10)
                out.append(UInt8(ascii: "0") + byte % 10)
            } else {
                if needsEscape(byte) { out.append(UInt8(ascii: "\\")) }
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x21...0x7E:
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: ";"), UInt8(ascii: "@"),
                UInt8(ascii: "$"), UInt8(ascii: "\\"):
                return true
            default: return false
            }
        default: return true
        }
    }

    /// The last `labels` labels of this name (`labels` in `1...labelCount`).
    public func suffix(labels: Int) -> DomainName {
        if labels == labelCount { return self }
        return DomainName(validatedBytes: Array(bytes[suffixStart(labels: labels)...]))
    }

    /// Where the last `labels` labels start in `bytes` (`labels` in `1...labelCount`).
    public func suffixStart(labels: Int) -> Int {
        precondition(labels >= 1 && labels <= labelCount, "suffix(labels:) out of range")
        if labels == labelCount { return 0 }
        var seen = 0
        var index = bytes.count
        while index > 0 {
            index -= 1
            if bytes[index] == UInt8(ascii: ".") {
                seen += 1
                if seen == labels { break }
            }
        }
        return index + 1
    }

    /// True when `self` is `other` or lies below it, on label boundaries only
    /// (`badexample.com` is not below `example.com`; docs/decisions.md#matching).
    public func isSubdomain(of other: DomainName) -> Bool {
        guard other.bytes.count <= bytes.count else { return false }
        let start = bytes.count - other.bytes.count
        guard bytes[start...].elementsEqual(other.bytes) else { return false }
        return start == 0 || bytes[start - 1] == UInt8(ascii: ".")
    }

    public static func < (lhs: DomainName, rhs: DomainName) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

extension UInt8 {
    /// An ASCII letter in lower case; any other byte as it is.
    @inline(__always)
    public var asciiLowercased: UInt8 {
        (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "Z")) ? self | 0x20 : self
    }

    /// The value of a hexadecimal digit in either case (MAC and IPv6 addresses), or nil.
    @inline(__always)
    var hexDigitValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension DomainName {
    /// A name from its uncompressed DNS wire form (length-prefixed labels ending with the
    /// root label), lowercased; nil for the root or a malformed form. One allocation.
    public init?(wire: some Collection<UInt8>) {
        var out: [UInt8] = []
        out.reserveCapacity(wire.count)
        var index = wire.startIndex
        while index != wire.endIndex {
            let length = Int(wire[index])
            index = wire.index(after: index)
            if length == 0 {
                guard index == wire.endIndex, !out.isEmpty else { return nil }
                self.init(validatedBytes: out)
                return
            }
            guard length <= 63, wire.distance(from: index, to: wire.endIndex) > length else { return nil }
            if !out.isEmpty { out.append(UInt8(ascii: ".")) }
            for _ in 0..<length {
                out.append(wire[index].asciiLowercased)
                index = wire.index(after: index)
            }
        }
        return nil
    }

    /// `init(wire:)` into `storage`, which the caller keeps and hands in again (one per loop
    /// thread): the name shares it, so once the previous name is gone nothing is allocated.
    public init?(wire: [UInt8], storage: inout [UInt8]) {
        // Checked as `init(wire:)` checks it; then the dotted form is the wire form without
        // its first and last bytes, each length byte between labels turned into a dot.
        var index = 0
        while index < wire.count, wire[index] != 0 {
            guard wire[index] <= 63 else { return nil }
            index += Int(wire[index]) + 1
        }
        guard index > 0, index == wire.count - 1 else { return nil }
        storage.removeAll(keepingCapacity: true)
        storage.append(contentsOf: wire[1..<index])
        storage.withUnsafeMutableBufferPointer { dotted in
            var next = Int(wire[0])
            for position in 0..<dotted.count {
                if position == next {
                    dotted[position] = UInt8(ascii: ".")
                    next += Int(wire[position + 1]) + 1
                } else {
                    dotted[position] = dotted[position].asciiLowercased
                }
            }
        }
        self.init(validatedBytes: storage)
    }

    /// The uncompressed wire form of this name (the inverse of `init(wire:)`).
    public var wire: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 2)
        var start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: ".") {
            out.append(UInt8(index - start))
            out.append(contentsOf: bytes[start..<index])
            start = index + 1
        }
        out.append(0)
        return out
    }
}

extension DomainName {
    /// Whether the last label is exactly `label` (no allocation).
    public func endsWithLabel(_ label: [UInt8]) -> Bool {
        guard bytes.count >= label.count else { return false }
        let start = bytes.count - label.count
        guard start == 0 || bytes[start - 1] == UInt8(ascii: ".") else { return false }
        for index in 0..<label.count where bytes[start + index] != label[index] { return false }
        return true
    }
}
