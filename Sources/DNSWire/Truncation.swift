// Cutting a serialized message to a UDP size limit (RFC 1035 §4.2.1, RFC 2181 §9,
// RFC 6891 §7).
//
// The cut is made on the bytes, at a record boundary: compression pointers only point
// backwards, so everything before the cut stays valid and nothing is re-encoded. Then:
// - whole RRsets only (RFC 2181 §9): the records of an RRset that does not fit entirely
//   are dropped with it;
// - TC is set when an answer or authority record was lost; records dropped from the
//   additional section alone do not set it (RFC 2181 §9);
// - the OPT record is kept (re-appended after the cut), so the client still sees EDNS,
//   the extended rcode and any Extended DNS Error. Only if even the header, the question
//   and OPT cannot fit is OPT dropped; if the question alone cannot, only the header stays.

extension DNSPacket {
    /// `packet` cut to at most `maxSize` bytes (never below the 12-byte header), or
    /// `packet` itself when it already fits. Throws if the message does not walk cleanly.
    public static func truncated(_ packet: [UInt8], maxSize: Int) throws(DNSWireError) -> [UInt8] {
        guard packet.count > maxSize else { return packet }
        var cursor = try DNSRecordCursor(packet)
        var records: [DNSRecordLocation] = []
        var opt: DNSRecordLocation?
        while let record = try cursor.next(in: packet) {
            guard record.type == .opt else {
                records.append(record)
                continue
            }
            guard opt == nil else { throw .multipleOPT(offset: record.offset) }
            opt = record
        }
        if let opt, opt.end != packet.count {
            // OPT in the middle: re-encode once with OPT last (the serializer's layout), so
            // the cut below is a plain prefix again.
            return try truncated(DNSMessage.parse(packet).serialized(), maxSize: maxSize)
        }
        return cut(packet, records, opt: opt, questionsEnd: cursor.questionsEnd, maxSize: maxSize)
    }

    /// For the writer's own output, which always walks cleanly; the fallback is unreachable
    /// but keeps this path free of traps.
    static func truncatedOwnOutput(_ packet: [UInt8], maxSize: Int) -> [UInt8] {
        if let cut = try? truncated(packet, maxSize: maxSize) { return cut }
        var header = (try? DNSHeader(packet)) ?? DNSHeader()
        header.isTruncated = true
        (header.questionCount, header.answerCount, header.authorityCount, header.additionalCount) = (0, 0, 0, 0)
        var writer = DNSWriter(capacity: DNSHeader.byteCount)
        writer.writeHeader(header)
        return writer.bytes
    }

    private static func cut(
        _ packet: [UInt8], _ records: [DNSRecordLocation], opt: DNSRecordLocation?, questionsEnd: Int, maxSize: Int
    ) -> [UInt8] {
        var header = (try? DNSHeader(packet)) ?? DNSHeader()
        let optBytes = opt.map { packet[$0.offset..<$0.end] } ?? []
        var budget = maxSize - optBytes.count
        var keepOPT = opt != nil
        if questionsEnd > budget {
            keepOPT = false
            budget = maxSize
        }
        var kept = 0
        var end = DNSHeader.byteCount
        var lostRequired = false
        if questionsEnd <= budget {
            end = questionsEnd
            while kept < records.count, records[kept].end <= budget { kept += 1 }
            if kept < records.count {
                let first = records[kept]
                while kept > 0 {
                    let previous = records[kept - 1]
                    guard previous.section == first.section, previous.type == first.type,
                        previous.dnsClass == first.dnsClass, namesEqual(packet, previous.offset, first.offset)
                    else { break }
                    kept -= 1
                }
                lostRequired = records[kept...].contains { $0.section != .additional }
            }
            if kept > 0 { end = records[kept - 1].end }
        } else {
            header.questionCount = 0
            lostRequired = true
        }
        let keptRecords = records[..<kept]
        header.answerCount = UInt16(keptRecords.count { $0.section == .answer })
        header.authorityCount = UInt16(keptRecords.count { $0.section == .authority })
        header.additionalCount = UInt16(keptRecords.count { $0.section == .additional } + (keepOPT ? 1 : 0))
        if lostRequired { header.isTruncated = true }
        var output = Array(packet[..<end])
        if keepOPT { output += optBytes }
        try? header.set(in: &output)
        return output
    }
}
