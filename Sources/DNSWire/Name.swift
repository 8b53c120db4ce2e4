/// A domain name in uncompressed wire form (RFC 1035 §3.1): length-prefixed labels ending
/// with the zero-length root label, 1…255 bytes, each label 1…63 bytes of any value.
///
/// Labels are raw bytes, never decoded: a wire name may hold any byte, and turning it into
/// a policy name (lowercase, IDNA) is the matcher's job. Equality and hashing ignore ASCII
/// case (RFC 4343 §3), so a `DNSName` can key a cache directly; compare `wire` for an exact
/// match. One array per name; `root` and copies share storage.
public struct DNSName: Hashable, Sendable, CustomStringConvertible {
    /// The uncompressed wire form, always valid: callers may read it freely.
    public internal(set) var wire: [UInt8]

    /// Wraps bytes already known to be a valid uncompressed name.
    init(trustedWire: [UInt8]) {
        wire = trustedWire
    }

    /// Validates an uncompressed wire name (no compression pointers allowed).
    public init(wire: [UInt8]) throws(DNSWireError) {
        var reader = DNSReader(wire)
        try reader.readNameUncompressed()
        guard reader.readerIndex == wire.count else { throw .trailingBytes(offset: reader.readerIndex) }
        self.wire = wire
    }

    /// The root name `.`.
    public static let root = DNSName(trustedWire: [0])

    public var isRoot: Bool { wire.count == 1 }

    public var labelCount: Int {
        var count = 0
        var index = 0
        while wire[index] != 0 {
            count += 1
            index += Int(wire[index]) + 1
        }
        return count
    }

    /// The labels left to right, without the root label; each is a slice of `wire`.
    public var labels: Labels { Labels(wire: wire) }

    public struct Labels: Sequence, Sendable {
        let wire: [UInt8]

        public func makeIterator() -> Iterator { Iterator(wire: wire, index: 0) }

        public struct Iterator: IteratorProtocol, Sendable {
            let wire: [UInt8]
            var index: Int

            public mutating func next() -> ArraySlice<UInt8>? {
                let length = Int(wire[index])
                guard length != 0 else { return nil }
                defer { index += length + 1 }
                return wire[index + 1...index + length]
            }
        }
    }

    /// The name without its first label; `nil` for the root.
    public var parent: DNSName? {
        guard !isRoot else { return nil }
        return DNSName(trustedWire: Array(wire[(Int(wire[0]) + 1)...]))
    }

    /// True when no byte is an ASCII capital, i.e. `lowercased()` would return `self`.
    public var isLowercase: Bool {
        for index in 0..<wire.count where wire[index] &- 0x41 < 26 { return false }
        return true
    }

    /// ASCII letters folded to lowercase (RFC 4343); other bytes unchanged. Shares storage
    /// with `self` (no allocation) when the name is already lowercase, the common case.
    public func lowercased() -> DNSName {
        guard !isLowercase else { return self }
        return DNSName(trustedWire: wire.map(asciiLower))
    }

    /// `self` is `other` or a name below it, ignoring ASCII case (e.g. anything under `resolver.arpa`).
    public func isSubdomain(of other: DNSName) -> Bool {
        let offset = wire.count - other.wire.count
        guard offset >= 0 else { return false }
        // The suffix must start on a label boundary, not in the middle of a label.
        var index = 0
        while index < offset { index += Int(wire[index]) + 1 }
        guard index == offset else { return false }
        for position in 0..<other.wire.count
        where asciiLower(wire[offset + position]) != asciiLower(other.wire[position]) {
            return false
        }
        return true
    }

    public static func == (lhs: DNSName, rhs: DNSName) -> Bool {
        guard lhs.wire.count == rhs.wire.count else { return false }
        // Length bytes are ≤ 63, below "A", so folding the whole wire form is safe.
        for index in 0..<lhs.wire.count where asciiLower(lhs.wire[index]) != asciiLower(rhs.wire[index]) {
            return false
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Eight folded bytes per combine: cheaper than one combine per byte.
        var word: UInt64 = 0
        var shift: UInt64 = 0
        for byte in wire {
            word |= UInt64(asciiLower(byte)) << shift
            shift += 8
            if shift == 64 {
                hasher.combine(word)
                word = 0
                shift = 0
            }
        }
        hasher.combine(word)
        hasher.combine(wire.count)
    }

    public var description: String { presentation }
}

@inline(__always)
func asciiLower(_ byte: UInt8) -> UInt8 {
    byte &- 0x41 < 26 ? byte | 0x20 : byte
}
