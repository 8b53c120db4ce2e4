/// A SvcParamKey (RFC 9460 §14.3.2).
public struct SvcParamKey: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let mandatory = SvcParamKey(0)
    public static let alpn = SvcParamKey(1)
    public static let noDefaultALPN = SvcParamKey(2)
    public static let port = SvcParamKey(3)
    public static let ipv4hint = SvcParamKey(4)
    /// Encrypted ClientHello configuration; the proxy strips it (docs/dns.md#answer-inspection).
    public static let ech = SvcParamKey(5)
    public static let ipv6hint = SvcParamKey(6)
    /// RFC 9461.
    public static let dohpath = SvcParamKey(7)
    /// RFC 9540.
    public static let ohttp = SvcParamKey(8)

    public static func < (lhs: SvcParamKey, rhs: SvcParamKey) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The presentation name (RFC 9460 §2.1), `keyNNNNN` for unnamed keys.
    public var description: String {
        switch rawValue {
        case 0: "mandatory"
        case 1: "alpn"
        case 2: "no-default-alpn"
        case 3: "port"
        case 4: "ipv4hint"
        case 5: "ech"
        case 6: "ipv6hint"
        case 7: "dohpath"
        case 8: "ohttp"
        default: "key\(rawValue)"
        }
    }
}

extension RData {
    /// SVCB/HTTPS RDATA (RFC 9460 §2.2): SvcPriority, TargetName, SvcParams.
    ///
    /// The TargetName is never compressed, and the SvcParams are kept as their validated
    /// wire bytes (keys strictly increasing, every length in bounds, the RFC 9460 §7 keys
    /// well-formed), so the RDATA is position-independent and editing it is byte surgery.
    public struct SVCB: Hashable, Sendable {
        public var priority: UInt16
        public var target: DNSName
        /// The SvcParams exactly as they go on the wire; valid by construction.
        public internal(set) var paramBytes: [UInt8]

        init(priority: UInt16, target: DNSName, validatedParams: [UInt8]) {
            self.priority = priority
            self.target = target
            self.paramBytes = validatedParams
        }

        /// Builds RDATA from params in any order (they are sorted); a repeated key is
        /// `.keyOrder`, and values are checked as when parsing.
        public init(
            priority: UInt16, target: DNSName, params: [(key: SvcParamKey, value: [UInt8])]
        )
            throws(DNSWireError)
        {
            var bytes: [UInt8] = []
            for (key, value) in params.sorted(by: { $0.key < $1.key }) {
                precondition(value.count <= 0xFFFF, "SvcParamValue longer than 65535 bytes")
                bytes += [UInt8(key.rawValue >> 8), UInt8(key.rawValue & 0xFF)]
                bytes += [UInt8(value.count >> 8), UInt8(value.count & 0xFF)]
                bytes += value
            }
            try Self.validateParams(bytes, 0..<bytes.count)
            self.init(priority: priority, target: target, validatedParams: bytes)
        }

        /// Parses RDATA on its own (outside a message); error offsets are within `rdata`.
        public init(rdata: [UInt8]) throws(DNSWireError) {
            var reader = DNSReader(rdata)
            reader.section = .answer
            self = try reader.withLimit(rdata.count, overrun: .rdataLength(type: .https, offset: 0)) {
                (reader: inout DNSReader) throws(DNSWireError) -> SVCB in try reader.readSVCB()
            }
        }

        /// The RDATA bytes (no RDLENGTH).
        public var rdata: [UInt8] {
            var writer = DNSWriter(capacity: 2 + target.wire.count + paramBytes.count)
            writer.writeSVCB(self)
            return writer.bytes
        }

        /// Priority 0: an alias to `target`; SvcParams are then meaningless (RFC 9460 §2.4.2).
        public var isAliasMode: Bool { priority == 0 }

        /// The params in wire order, each value a slice of `paramBytes`.
        public var params: Params { Params(bytes: paramBytes) }

        public struct Params: Sequence, Sendable {
            let bytes: [UInt8]
            public func makeIterator() -> Iterator { Iterator(bytes: bytes, index: 0) }

            public struct Iterator: IteratorProtocol, Sendable {
                let bytes: [UInt8]
                var index: Int
                public mutating func next() -> (key: SvcParamKey, value: ArraySlice<UInt8>)? {
                    guard index + 4 <= bytes.count else { return nil }
                    let key = SvcParamKey(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]))
                    let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
                    defer { index += 4 + length }
                    return (key, bytes[index + 4..<index + 4 + length])
                }
            }
        }

        public func value(for key: SvcParamKey) -> ArraySlice<UInt8>? {
            params.first { $0.key == key }?.value
        }
    }
}

extension DNSReader {
    /// Reads SVCB RDATA filling the current limit (set by `readRData`).
    mutating func readSVCB() throws(DNSWireError) -> RData.SVCB {
        let priority = try readUInt16()
        let nameStart = readerIndex
        try readNameUncompressed()
        let target =
            readerIndex - nameStart == 1 ? DNSName.root : DNSName(trustedWire: Array(bytes[nameStart..<readerIndex]))
        try RData.SVCB.validateParams(bytes, readerIndex..<limit)
        return RData.SVCB(priority: priority, target: target, validatedParams: try readBytes(readableBytes))
    }
}

extension DNSWriter {
    mutating func writeSVCB(_ svcb: RData.SVCB) {
        writeUInt16(svcb.priority)
        writeName(svcb.target, compress: false)
        writeBytes(svcb.paramBytes)
    }
}
