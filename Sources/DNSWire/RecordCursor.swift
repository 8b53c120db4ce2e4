/// Where one record sits in a serialized message, as found by `DNSRecordCursor`.
public struct DNSRecordLocation: Hashable, Sendable {
    public var section: DNSSection
    /// The offset of the owner name, where the record starts.
    public var offset: Int
    public var type: DNSType
    public var dnsClass: DNSClass
    public var ttl: UInt32
    public var rdataRange: Range<Int>

    /// Where the 4 TTL bytes are, for an in-place rewrite.
    public var ttlOffset: Int { rdataRange.lowerBound - 6 }
    /// The offset just past the record.
    public var end: Int { rdataRange.upperBound }
}

/// Walks the records of a serialized message one at a time, allocating nothing.
///
/// Each step validates the owner name (every compression rule) and RDLENGTH, but not the
/// RDATA itself. The cursor keeps no reference to the bytes: pass the same array to every
/// `next(in:)`, which leaves the caller free to edit it in place between steps (no
/// copy-on-write), as long as no length changes.
public struct DNSRecordCursor: Sendable {
    public let header: DNSHeader
    /// The offset just past the question section, where the first record starts.
    public let questionsEnd: Int
    private var position: Int
    private var section: DNSSection = .answer
    private var remaining: Int

    /// Checks the header and counts and skips the questions.
    public init(_ packet: [UInt8]) throws(DNSWireError) {
        var reader = DNSReader(packet)
        let header = try reader.readHeader()
        try header.validateCounts(packetLength: packet.count)
        for _ in 0..<header.questionCount {
            try reader.skipName()
            try reader.skipBytes(4)
        }
        self.init(header: header, questionsEnd: reader.readerIndex)
    }

    /// Starts at `questionsEnd` for a caller that read the questions itself; the counts
    /// must already have been checked with `validateCounts`.
    init(header: DNSHeader, questionsEnd: Int) {
        self.header = header
        self.questionsEnd = questionsEnd
        position = questionsEnd
        remaining = Int(header.answerCount)
    }

    /// The next record, or `nil` after the last one, at which point bytes left over are
    /// `.trailingBytes`.
    public mutating func next(in packet: [UInt8]) throws(DNSWireError) -> DNSRecordLocation? {
        while remaining == 0 {
            switch section {
            case .answer: (section, remaining) = (.authority, Int(header.authorityCount))
            case .authority: (section, remaining) = (.additional, Int(header.additionalCount))
            default:
                guard position == packet.count else { throw .trailingBytes(offset: position) }
                return nil
            }
        }
        var reader = DNSReader(packet, readerIndex: position)
        reader.section = section
        let offset = position
        try reader.skipName()
        let type = DNSType(try reader.readUInt16())
        let dnsClass = DNSClass(try reader.readUInt16())
        let ttl = try reader.readUInt32()
        let length = Int(try reader.readUInt16())
        let rdataStart = reader.readerIndex
        try reader.skipBytes(length)
        position = reader.readerIndex
        remaining -= 1
        return DNSRecordLocation(
            section: section, offset: offset, type: type, dnsClass: dnsClass, ttl: ttl,
            rdataRange: rdataStart..<reader.readerIndex)
    }
}

extension DNSPacket {
    /// Overwrites the message ID in place, e.g. the client's ID onto an upstream answer.
    public static func setID(_ id: UInt16, in packet: inout [UInt8]) throws(DNSWireError) {
        guard packet.count >= DNSHeader.byteCount else { throw .shortHeader(length: packet.count) }
        packet[0] = UInt8(id >> 8)
        packet[1] = UInt8(id & 0xFF)
    }

    /// Overwrites the header's 4 rcode bits in place; the OPT's upper bits are untouched.
    public static func setRcode(_ rcode: DNSRcode, in packet: inout [UInt8]) throws(DNSWireError) {
        guard packet.count >= DNSHeader.byteCount else { throw .shortHeader(length: packet.count) }
        packet[3] = packet[3] & 0xF0 | UInt8(rcode.rawValue & 0x0F)
    }

    /// Whether the owner names at two offsets are equal ignoring ASCII case, following
    /// pointers. Both must already have been validated (by a cursor step); the walk is still
    /// hop-limited and bounds-checked so that a wrong offset yields `false`, not a trap.
    static func namesEqual(_ packet: [UInt8], _ first: Int, _ second: Int) -> Bool {
        var (a, b) = (first, second)
        var hops = 0
        while hops <= 2 * DNSReader.maxPointerHops {
            guard a < packet.count, b < packet.count else { return false }
            if packet[a] >= 0xC0 || packet[b] >= 0xC0 {
                hops += 1
                if packet[a] >= 0xC0 {
                    guard a + 1 < packet.count else { return false }
                    a = Int(packet[a] & 0x3F) << 8 | Int(packet[a + 1])
                }
                if packet[b] >= 0xC0 {
                    guard b + 1 < packet.count else { return false }
                    b = Int(packet[b] & 0x3F) << 8 | Int(packet[b + 1])
                }
                continue
            }
            if a == b { return true }
            let length = Int(packet[a])
            guard packet[b] == packet[a], length < 64 else { return false }
            if length == 0 { return true }
            guard a + length < packet.count, b + length < packet.count else { return false }
            for step in 1...length where asciiLower(packet[a + step]) != asciiLower(packet[b + step]) {
                return false
            }
            a += length + 1
            b += length + 1
        }
        return false
    }
}
