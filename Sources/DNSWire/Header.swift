/// The fixed 12-byte message header (RFC 1035 §4.1.1), readable without parsing anything
/// after it: the first and cheapest layer of checks on a packet.
///
/// `flags` keeps all sixteen bits, so bits this type does not name (the Z bit) survive a
/// round trip. The counts are what the packet claims; the serializers overwrite them with
/// what they actually write.
public struct DNSHeader: Hashable, Sendable {
    public static let byteCount = 12

    public var id: UInt16
    public var flags: UInt16
    public var questionCount: UInt16
    public var answerCount: UInt16
    public var authorityCount: UInt16
    public var additionalCount: UInt16

    public init(
        id: UInt16 = 0, flags: UInt16 = 0, questionCount: UInt16 = 0, answerCount: UInt16 = 0,
        authorityCount: UInt16 = 0, additionalCount: UInt16 = 0
    ) {
        self.id = id
        self.flags = flags
        self.questionCount = questionCount
        self.answerCount = answerCount
        self.authorityCount = authorityCount
        self.additionalCount = additionalCount
    }

    /// Reads the header at the start of `packet`. Throws `.shortHeader` for fewer than 12 bytes.
    public init(_ packet: [UInt8]) throws(DNSWireError) {
        var reader = DNSReader(packet)
        self = try reader.readHeader()
    }

    // Bit positions of RFC 1035 §4.1.1 plus AD/CD from RFC 4035 §3.2.
    private static let qr: UInt16 = 0x8000
    private static let aa: UInt16 = 0x0400
    private static let tc: UInt16 = 0x0200
    private static let rd: UInt16 = 0x0100
    private static let ra: UInt16 = 0x0080
    private static let ad: UInt16 = 0x0020
    private static let cd: UInt16 = 0x0010

    private func flag(_ mask: UInt16) -> Bool { flags & mask != 0 }

    private mutating func setFlag(_ mask: UInt16, _ on: Bool) {
        flags = on ? flags | mask : flags & ~mask
    }

    /// QR: set in responses. The proxy drops queries that have it (docs/dns.md#hostile-input).
    public var isResponse: Bool {
        get { flag(Self.qr) }
        set { setFlag(Self.qr, newValue) }
    }

    public var opcode: DNSOpcode {
        get { DNSOpcode(UInt8(truncatingIfNeeded: flags >> 11) & 0x0F) }
        set { flags = flags & ~0x7800 | UInt16(newValue.rawValue & 0x0F) << 11 }
    }

    public var isAuthoritative: Bool {
        get { flag(Self.aa) }
        set { setFlag(Self.aa, newValue) }
    }

    /// TC: the message was cut to fit (RFC 2181 §9); the client retries over TCP.
    public var isTruncated: Bool {
        get { flag(Self.tc) }
        set { setFlag(Self.tc, newValue) }
    }

    public var recursionDesired: Bool {
        get { flag(Self.rd) }
        set { setFlag(Self.rd, newValue) }
    }

    public var recursionAvailable: Bool {
        get { flag(Self.ra) }
        set { setFlag(Self.ra, newValue) }
    }

    /// AD (RFC 4035 §3.2.3).
    public var authenticData: Bool {
        get { flag(Self.ad) }
        set { setFlag(Self.ad, newValue) }
    }

    /// CD (RFC 4035 §3.2.2).
    public var checkingDisabled: Bool {
        get { flag(Self.cd) }
        set { setFlag(Self.cd, newValue) }
    }

    /// The low four bits of the rcode only; see `DNSMessage.rcode` for the 12-bit value.
    public var rcode: DNSRcode {
        get { DNSRcode(flags & 0x000F) }
        set { flags = flags & ~0x000F | newValue.rawValue & 0x000F }
    }

    /// Overwrites the first 12 bytes of a serialized message with this header, e.g. to
    /// restore the client's ID on an upstream answer. No other byte moves.
    public func set(in packet: inout [UInt8]) throws(DNSWireError) {
        guard packet.count >= Self.byteCount else { throw .shortHeader(length: packet.count) }
        Self.put(id, at: 0, in: &packet)
        Self.put(flags, at: 2, in: &packet)
        Self.put(questionCount, at: 4, in: &packet)
        Self.put(answerCount, at: 6, in: &packet)
        Self.put(authorityCount, at: 8, in: &packet)
        Self.put(additionalCount, at: 10, in: &packet)
    }

    private static func put(_ word: UInt16, at offset: Int, in packet: inout [UInt8]) {
        packet[offset] = UInt8(truncatingIfNeeded: word >> 8)
        packet[offset + 1] = UInt8(truncatingIfNeeded: word)
    }

    /// The cheapest sanity check on the counts, before any name is read or anything is
    /// allocated: a question takes at least 5 bytes (root name, type, class) and a record at
    /// least 11 (root name, type, class, TTL, RDLENGTH). A count that cannot fit in
    /// `packetLength` bytes is an attack or garbage, and bounds every later `reserveCapacity`.
    public func validateCounts(packetLength: Int) throws(DNSWireError) {
        var needed = Self.byteCount + 5 * Int(questionCount)
        guard needed <= packetLength else {
            throw .countTooLarge(section: .question, count: Int(questionCount))
        }
        needed += 11 * Int(answerCount)
        guard needed <= packetLength else { throw .countTooLarge(section: .answer, count: Int(answerCount)) }
        needed += 11 * Int(authorityCount)
        guard needed <= packetLength else {
            throw .countTooLarge(section: .authority, count: Int(authorityCount))
        }
        needed += 11 * Int(additionalCount)
        guard needed <= packetLength else {
            throw .countTooLarge(section: .additional, count: Int(additionalCount))
        }
    }
}

extension DNSReader {
    /// Reads the 12-byte header at offset 0 and leaves `section` at `.question`.
    public mutating func readHeader() throws(DNSWireError) -> DNSHeader {
        guard bytes.count >= DNSHeader.byteCount else { throw .shortHeader(length: bytes.count) }
        readerIndex = 0
        section = .header
        let header = DNSHeader(
            id: try readUInt16(), flags: try readUInt16(), questionCount: try readUInt16(),
            answerCount: try readUInt16(), authorityCount: try readUInt16(),
            additionalCount: try readUInt16())
        section = .question
        return header
    }
}

extension DNSWriter {
    public mutating func writeHeader(_ header: DNSHeader) {
        writeUInt16(header.id)
        writeUInt16(header.flags)
        writeUInt16(header.questionCount)
        writeUInt16(header.answerCount)
        writeUInt16(header.authorityCount)
        writeUInt16(header.additionalCount)
    }
}
