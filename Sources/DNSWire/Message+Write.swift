/// Writes a message section by section, straight into one buffer, with compression.
///
/// The builder behind `DNSMessage.serialized` and the cheap way to make synthesized
/// answers (block, NODATA, errors) without building a `DNSMessage` first. Sections must be
/// added in wire order (questions, answer, authority, additional): adding to an earlier
/// section after a later one is a programming error and traps. OPT is written by `finish`,
/// last, as RFC 6891 expects of a pseudo-record.
public struct DNSMessageWriter: Sendable {
    /// Written by `finish` with the counts of what was actually added.
    public var header: DNSHeader
    public var edns: EDNS?
    private var writer: DNSWriter
    private var current: DNSSection = .question
    private var counts: (question: Int, answer: Int, authority: Int, additional: Int) = (0, 0, 0, 0)
    private let compress: Bool

    /// - Parameter capacity: bytes to reserve; 512 covers nearly every answer in one allocation.
    public init(header: DNSHeader, edns: EDNS? = nil, capacity: Int = 512, compress: Bool = true) {
        self.header = header
        self.edns = edns
        self.compress = compress
        writer = DNSWriter(capacity: capacity)
        writer.writeHeader(header)
    }

    /// Writes over `storage` (`DNSWriter(reusing:)`).
    public init(header: DNSHeader, edns: EDNS? = nil, reusing storage: consuming [UInt8]) {
        self.header = header
        self.edns = edns
        compress = true
        writer = DNSWriter(reusing: consume storage)
        writer.writeHeader(header)
    }

    public mutating func addQuestion(_ question: DNSQuestion) {
        precondition(current == .question, "questions must come before records")
        writer.writeQuestion(question, compress: compress)
        counts.question += 1
    }

    /// Appends `record` to `section` (answer, authority or additional).
    public mutating func addRecord(_ record: ResourceRecord, to section: DNSSection) {
        precondition(section >= .answer && section >= current, "records must be added in section order")
        current = section
        writer.writeRecord(record, compress: compress)
        switch section {
        case .answer: counts.answer += 1
        case .authority: counts.authority += 1
        default: counts.additional += 1
        }
    }

    /// Appends the record at `location` in `message` to `section` with `ttl` for its TTL,
    /// as `addRecord` would append it decoded: names read into `names` (reused storage, as
    /// `DNSReader.readName(into:)`) and written with this message's compression, so nothing
    /// is allocated. Only records of class IN whose RDATA is an address or one name (A,
    /// AAAA, CNAME); false, with nothing written, for any other, which the caller decodes.
    public mutating func addRecord(
        copying location: DNSRecordLocation, of message: [UInt8], ttl: UInt32, to section: DNSSection,
        names: inout [UInt8]
    ) -> Bool {
        let type = location.type
        guard location.dnsClass == .in, type == .a || type == .aaaa || type == .cname,
            type != .a || location.rdataRange.count == 4, type != .aaaa || location.rdataRange.count == 16
        else { return false }
        precondition(section >= .answer && section >= current, "records must be added in section order")
        var reader = DNSReader(message, readerIndex: location.offset)
        guard let owner = try? reader.readName(into: &names) else { return false }
        let start = writer.writerIndex
        writer.writeName(owner, compress: compress)
        writer.writeUInt16(type.rawValue)
        writer.writeUInt16(location.dnsClass.rawValue)
        writer.writeUInt32(ttl)
        let lengthOffset = writer.writerIndex
        writer.writeUInt16(0)
        if type == .cname {
            reader = DNSReader(message, readerIndex: location.rdataRange.lowerBound)
            guard let target = try? reader.readName(into: &names),
                reader.readerIndex == location.rdataRange.upperBound
            else {
                writer.moveWriterIndex(to: start)
                return false
            }
            writer.writeName(target, compress: compress)
        } else {
            writer.writeBytes(message[location.rdataRange])
        }
        writer.setUInt16(UInt16(truncatingIfNeeded: writer.writerIndex - lengthOffset - 2), at: lengthOffset)
        current = section
        switch section {
        case .answer: counts.answer += 1
        case .authority: counts.authority += 1
        default: counts.additional += 1
        }
        return true
    }

    /// The message so far in bytes, without OPT (for size estimates).
    public var byteCount: Int { writer.writerIndex }

    /// Writes OPT and the final header and returns the message. When it exceeds `maxSize`
    /// (the client's UDP limit) it is cut as `DNSPacket.truncated` describes: whole RRsets
    /// dropped, TC set when answer or authority records were lost, OPT kept.
    public consuming func finish(maxSize: Int = 65_535) -> [UInt8] {
        // Moved, not copied: a copy's bytes changed would be an array of their own.
        var message = consume self
        return message.seal(maxSize: maxSize)
    }

    private mutating func seal(maxSize: Int) -> [UInt8] {
        if let edns {
            writer.writeOPT(edns)
            counts.additional += 1
        }
        precondition(
            max(counts.question, counts.answer, counts.authority, counts.additional) <= 0xFFFF,
            "more than 65535 entries in a section")
        header.questionCount = UInt16(counts.question)
        header.answerCount = UInt16(counts.answer)
        header.authorityCount = UInt16(counts.authority)
        header.additionalCount = UInt16(counts.additional)
        writer.setUInt16(header.id, at: 0)
        writer.setUInt16(header.flags, at: 2)
        writer.setUInt16(header.questionCount, at: 4)
        writer.setUInt16(header.answerCount, at: 6)
        writer.setUInt16(header.authorityCount, at: 8)
        writer.setUInt16(header.additionalCount, at: 10)
        let bytes = writer.bytes
        guard bytes.count > maxSize else { return bytes }
        return DNSPacket.truncatedOwnOutput(bytes, maxSize: maxSize)
    }

    /// `finish`, with one Extended DNS Error (RFC 8914) in the OPT, whose EXTRA-TEXT `text`
    /// appends to the bytes it is given: the same bytes as an `edns` carrying
    /// `ExtendedDNSError(code:text:).option`, without building the option or the text.
    /// Without `edns` (the client sent no OPT) there is no OPT and no error. `edns` must
    /// carry no options of its own.
    public consuming func finish(
        maxSize: Int = 65_535, extendedError code: EDECode, text: (inout [UInt8]) -> Void
    ) -> [UInt8] {
        var message = consume self
        message.writeExtendedError(code, text: text)
        return message.seal(maxSize: maxSize)
    }

    private mutating func writeExtendedError(_ code: EDECode, text: (inout [UInt8]) -> Void) {
        if let edns {
            precondition(edns.options.isEmpty, "an Extended DNS Error is the only option")
            writer.writeUInt8(0)
            writer.writeUInt16(DNSType.opt.rawValue)
            writer.writeUInt16(edns.udpPayloadSize)
            writer.writeUInt32(edns.ttlField)
            let rdataLength = writer.writerIndex
            writer.writeUInt16(0)
            writer.writeUInt16(EDNSOptionCode.extendedError.rawValue)
            let optionLength = writer.writerIndex
            writer.writeUInt16(0)
            writer.writeUInt16(code.rawValue)
            text(&writer.bytes)
            writer.setUInt16(UInt16(truncatingIfNeeded: writer.writerIndex - optionLength - 2), at: optionLength)
            writer.setUInt16(UInt16(truncatingIfNeeded: writer.writerIndex - rdataLength - 2), at: rdataLength)
            counts.additional += 1
            self.edns = nil
        }
    }
}

extension DNSMessage {
    /// The message on the wire: counts from the arrays, OPT last, names compressed unless
    /// `compress` is false, cut to `maxSize` as `DNSMessageWriter.finish` does.
    public func serialized(maxSize: Int = 65_535, compress: Bool = true) -> [UInt8] {
        var writer = DNSMessageWriter(header: header, edns: edns, compress: compress)
        for question in questions { writer.addQuestion(question) }
        for record in answers { writer.addRecord(record, to: .answer) }
        for record in authorities { writer.addRecord(record, to: .authority) }
        for record in additionals { writer.addRecord(record, to: .additional) }
        return writer.finish(maxSize: maxSize)
    }
}
