/// An EDNS option code (RFC 6891 §6.1.2, IANA "DNS EDNS0 Option Codes").
public struct EDNSOptionCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let nsid = EDNSOptionCode(3)
    public static let clientSubnet = EDNSOptionCode(8)
    public static let cookie = EDNSOptionCode(10)
    public static let tcpKeepalive = EDNSOptionCode(11)
    public static let padding = EDNSOptionCode(12)
    /// Extended DNS Error (RFC 8914).
    public static let extendedError = EDNSOptionCode(15)

    public var description: String {
        switch rawValue {
        case 3: "NSID"
        case 8: "ECS"
        case 10: "COOKIE"
        case 11: "TCP-KEEPALIVE"
        case 12: "PADDING"
        case 15: "EDE"
        default: "OPT\(rawValue)"
        }
    }
}

/// One EDNS option: a code and its raw data.
public struct EDNSOption: Hashable, Sendable {
    public var code: EDNSOptionCode
    public var data: [UInt8]

    public init(code: EDNSOptionCode, data: [UInt8]) {
        self.code = code
        self.data = data
    }
}

/// The OPT pseudo-record (RFC 6891 §6.1), lifted out of the additional section.
///
/// A message has at most one; `DNSMessage.edns` and `DNSQuery.edns` are `nil` when the
/// sender did not use EDNS, and then the response must not carry OPT either (§7).
public struct EDNS: Hashable, Sendable {
    /// The requestor's UDP payload size (the OPT CLASS field). Values below 512 are to be
    /// treated as 512 (§6.2.3); that is the caller's decision, so the field is kept raw.
    public var udpPayloadSize: UInt16
    /// The upper eight bits of the 12-bit rcode (§6.1.3).
    public var rcodeHigh: UInt8
    public var version: UInt8
    /// The 16 flag bits of the OPT TTL field; only DO is defined (RFC 3225).
    public var flags: UInt16
    public var options: [EDNSOption]

    /// 1232 bytes is the DNS Flag Day 2020 default, safe against IP fragmentation.
    public init(
        udpPayloadSize: UInt16 = 1232, dnssecOK: Bool = false, version: UInt8 = 0, rcodeHigh: UInt8 = 0,
        options: [EDNSOption] = []
    ) {
        self.udpPayloadSize = udpPayloadSize
        self.rcodeHigh = rcodeHigh
        self.version = version
        self.flags = dnssecOK ? 0x8000 : 0
        self.options = options
    }

    /// DO: the requestor can handle DNSSEC records (RFC 3225 §3).
    public var dnssecOK: Bool {
        get { flags & 0x8000 != 0 }
        set { flags = newValue ? flags | 0x8000 : flags & ~0x8000 }
    }

    /// The first option with `code`, if any.
    public func option(_ code: EDNSOptionCode) -> EDNSOption? {
        options.first { $0.code == code }
    }

    /// Bytes the OPT record takes on the wire: root name, 10 fixed bytes, the options.
    public var wireLength: Int {
        options.reduce(11) { $0 + 4 + $1.data.count }
    }

    /// The OPT TTL field: extended rcode, version, flags (§6.1.3).
    var ttlField: UInt32 {
        UInt32(rcodeHigh) << 24 | UInt32(version) << 16 | UInt32(flags)
    }

    init(payloadSize: UInt16, ttlField: UInt32, options: [EDNSOption]) {
        self.udpPayloadSize = payloadSize
        self.rcodeHigh = UInt8(truncatingIfNeeded: ttlField >> 24)
        self.version = UInt8(truncatingIfNeeded: ttlField >> 16)
        self.flags = UInt16(truncatingIfNeeded: ttlField)
        self.options = options
    }
}

extension EDNS {
    /// The OPT of a response to a query that carried `query`: version 0, `udpPayloadSize`,
    /// `options`, and of the flags only DO, copied (RFC 3225 §3: a validating client reads
    /// it to know its DO was seen); other flag bits are not echoed (RFC 6891 §6.1.4).
    public static func answering(
        _ query: EDNS, udpPayloadSize: UInt16, rcodeHigh: UInt8 = 0, options: [EDNSOption] = []
    ) -> EDNS {
        EDNS(udpPayloadSize: udpPayloadSize, dnssecOK: query.dnssecOK, rcodeHigh: rcodeHigh, options: options)
    }

    /// Checks what makes an OPT record acceptable where it stands, cheapest first:
    /// its section, uniqueness, then a root owner name (RFC 6891 §6.1.1).
    static func checkPlacement(
        section: DNSSection, offset: Int, ownerIsRoot: Bool, alreadySeen: Bool
    ) throws(DNSWireError) {
        guard section == .additional else { throw .optOutsideAdditional(section: section) }
        guard !alreadySeen else { throw .multipleOPT(offset: offset) }
        guard ownerIsRoot else { throw .optNotRoot(offset: offset) }
    }
}

extension DNSReader {
    /// Reads the options filling `length` bytes of OPT RDATA at `readerIndex`.
    /// An option running past the RDATA is `.badEDNSOption` at that option's offset.
    mutating func readEDNSOptions(length: Int) throws(DNSWireError) -> [EDNSOption] {
        guard length <= readableBytes else { throw truncated(at: readerIndex) }
        let end = readerIndex + length
        var options: [EDNSOption] = []
        while readerIndex < end {
            let start = readerIndex
            guard end - start >= 4 else { throw .badEDNSOption(offset: start) }
            let code = try readUInt16()
            let dataLength = Int(try readUInt16())
            guard dataLength <= end - readerIndex else { throw .badEDNSOption(offset: start) }
            options.append(EDNSOption(code: EDNSOptionCode(code), data: try readBytes(dataLength)))
        }
        return options
    }
}

extension DNSWriter {
    /// Appends the OPT record. It takes no part in compression (its owner is the root).
    public mutating func writeOPT(_ edns: EDNS) {
        writeUInt8(0)
        writeUInt16(DNSType.opt.rawValue)
        writeUInt16(edns.udpPayloadSize)
        writeUInt32(edns.ttlField)
        let lengthOffset = writerIndex
        writeUInt16(0)
        for option in edns.options {
            precondition(option.data.count <= 0xFFFF, "EDNS option longer than 65535 bytes")
            writeUInt16(option.code.rawValue)
            writeUInt16(UInt16(option.data.count))
            writeBytes(option.data)
        }
        setUInt16(UInt16(truncatingIfNeeded: writerIndex - lengthOffset - 2), at: lengthOffset)
    }
}
