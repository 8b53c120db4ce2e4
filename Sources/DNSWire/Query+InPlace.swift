extension DNSQuery {
    /// The common query read where it lies (a receive slot), so answering it need not copy
    /// the packet: a header, one question whose name has no compression pointer, no answer
    /// or authority records, and at most one OPT record, owned by the root.
    ///
    /// The name is written into `nameStorage`, which the caller keeps and hands in again
    /// (one per loop thread): the query's name shares that storage, so once the previous
    /// query's name is gone nothing is allocated. Nil for every other packet, valid or not;
    /// the caller then parses a copy with `parse(_:)`, which gives the same query or names
    /// the error. The OPT's options are checked as `parse` checks them but not kept: a
    /// query answered in place echoes none (RFC 6891 §6.1.2 leaves that to each option).
    public static func parseCommon(_ packet: UnsafeRawBufferPointer, nameStorage: inout [UInt8]) -> DNSQuery? {
        let count = packet.count
        guard count >= DNSHeader.byteCount else { return nil }
        func word(_ offset: Int) -> UInt16 { UInt16(packet[offset]) << 8 | UInt16(packet[offset + 1]) }
        let header = DNSHeader(
            id: word(0), flags: word(2), questionCount: word(4), answerCount: word(6), authorityCount: word(8),
            additionalCount: word(10))
        guard header.questionCount == 1, header.answerCount == 0, header.authorityCount == 0,
            header.additionalCount <= 1
        else { return nil }
        // The name as `measureName` walks it, without pointers (at offset 12 none is valid).
        var position = DNSHeader.byteCount
        while true {
            guard position < count else { return nil }
            let length = Int(packet[position])
            if length == 0 { break }
            guard length <= 63, position + length + 1 < count, position + length + 1 - DNSHeader.byteCount < 255
            else { return nil }
            position += length + 1
        }
        let nameEnd = position + 1
        guard nameEnd + 4 <= count else { return nil }
        nameStorage.removeAll(keepingCapacity: true)
        nameStorage.append(contentsOf: packet[DNSHeader.byteCount..<nameEnd])
        let question = DNSQuestion(
            name: nameEnd == DNSHeader.byteCount + 1 ? .root : DNSName(trustedWire: nameStorage),
            type: DNSType(word(nameEnd)), dnsClass: DNSClass(word(nameEnd + 2)))
        let questionEnd = nameEnd + 4
        guard header.additionalCount == 1 else {
            return questionEnd == count
                ? DNSQuery(header: header, question: question, questionEnd: questionEnd, edns: nil) : nil
        }
        // Root owner (1), type, class, TTL (4), RDLENGTH: 11 bytes before the options.
        let options = questionEnd + 11
        guard options <= count, packet[questionEnd] == 0, word(questionEnd + 1) == DNSType.opt.rawValue,
            options + Int(word(questionEnd + 9)) == count
        else { return nil }
        var option = options
        while option < count {
            guard count - option >= 4, Int(word(option + 2)) <= count - option - 4 else { return nil }
            option += 4 + Int(word(option + 2))
        }
        let ttl = UInt32(word(questionEnd + 5)) << 16 | UInt32(word(questionEnd + 7))
        let edns = EDNS(payloadSize: word(questionEnd + 3), ttlField: ttl, options: [])
        return DNSQuery(header: header, question: question, questionEnd: questionEnd, edns: edns)
    }
}
