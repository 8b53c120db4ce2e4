import DNSWire

/// The edits the proxy makes to an upstream answer, each checked against the parsed message.
enum DNSAnswerEdits {
    /// Without `ech`, the answer is the same message minus that one param, and every
    /// SVCB/HTTPS record stays valid (a `mandatory` list that named `ech` loses it).
    static func removingECH(_ message: DNSMessage, _ packet: [UInt8]) throws(PropertyViolation) {
        var expected = message
        let changed = expected.removeECH()
        let edited: [UInt8]?
        do {
            edited = try DNSPacket.removingECH(from: packet)
        } catch {
            throw PropertyViolation(problem: "ECH removal rejects a message the parser accepts: \(error)")
        }
        guard let edited else {
            try check(!changed, "ECH removal found no ech where the parsed message has one")
            return
        }
        try check(changed, "ECH removal rewrote a message without ech")
        let again: DNSMessage
        do {
            again = try DNSMessage.parse(edited)
        } catch {
            throw PropertyViolation(problem: "the answer without ECH does not parse: \(error)")
        }
        try check(again == expected, "the answer without ECH differs from the parsed one minus ech")
        for record in again.answers + again.authorities + again.additionals {
            try check(record.rdata.svcb?.value(for: .ech) == nil, "ech left in \(record)")
        }
    }

    /// Cut to a size taken from the packet's last two bytes: at most that size (never below
    /// the header), a valid message whose sections are prefixes of the original's, never
    /// splitting an RRset, with TC set when an answer or authority record was lost.
    static func truncation(_ message: DNSMessage, _ packet: [UInt8]) throws(PropertyViolation) {
        let tail = packet.count >= 2 ? Int(packet[packet.count - 2]) << 8 | Int(packet[packet.count - 1]) : 0
        let maxSize = DNSHeader.byteCount + tail % max(1, packet.count - DNSHeader.byteCount + 1)
        let cut: [UInt8]
        do {
            cut = try DNSPacket.truncated(packet, maxSize: maxSize)
        } catch {
            throw PropertyViolation(problem: "truncation rejects a message the parser accepts: \(error)")
        }
        try check(cut.count <= max(maxSize, DNSHeader.byteCount), "cut to \(maxSize) gives \(cut.count) bytes")
        let kept: DNSMessage
        do {
            kept = try DNSMessage.parse(cut)
        } catch {
            throw PropertyViolation(problem: "message cut to \(maxSize) bytes does not parse: \(error)")
        }
        try check(
            kept.questions == message.questions || kept.questions.isEmpty, "truncation changed the question")
        try check(kept.edns == message.edns || kept.edns == nil, "truncation changed EDNS")
        let sections = [
            (kept.answers, message.answers), (kept.authorities, message.authorities),
            (kept.additionals, message.additionals),
        ]
        for (short, whole) in sections {
            try check(short.count <= whole.count && Array(whole.prefix(short.count)) == short, "not a prefix")
            if short.count > 0, short.count < whole.count {
                try check(
                    !whole[short.count].isSameRRSet(as: whole[short.count - 1]),
                    "truncation split the RRset of \(whole[short.count])")
            }
        }
        let lost =
            kept.answers.count < message.answers.count || kept.authorities.count < message.authorities.count
            || (kept.questions.isEmpty && !message.questions.isEmpty)
        try check(!lost || kept.header.isTruncated, "records lost without TC")
    }

    /// Ageing every TTL by a number taken from the packet: exactly the documented rule for
    /// each record, nothing else changed, and the minimum TTL agrees with the records.
    static func ttlAgeing(_ message: DNSMessage, _ packet: [UInt8]) throws(PropertyViolation) {
        let elapsed = UInt32(packet[packet.count / 2]) * 977
        let cap: UInt32 = packet.count % 2 == 0 ? .max : 86_400
        var aged = packet
        do {
            try DNSPacket.decrementTTLs(in: &aged, by: elapsed, cap: cap)
        } catch {
            throw PropertyViolation(problem: "TTL ageing rejects a message the parser accepts: \(error)")
        }
        guard let after = try? DNSMessage.parse(aged) else {
            throw PropertyViolation(problem: "the message with aged TTLs does not parse")
        }
        var expected = message
        func age(_ records: inout [ResourceRecord]) {
            for index in records.indices {
                let ttl = records[index].ttl > 0x7FFF_FFFF ? 0 : records[index].ttl
                records[index].ttl = min(ttl > elapsed ? ttl - elapsed : 0, cap)
            }
        }
        age(&expected.answers)
        age(&expected.authorities)
        age(&expected.additionals)
        try check(after == expected, "ageing TTLs by \(elapsed) changed something else")
        let records = message.answers + message.authorities + message.additionals
        let minimum = records.map { $0.ttl > 0x7FFF_FFFF ? 0 : $0.ttl }.min()
        try check((try? DNSPacket.minimumTTL(in: packet)) == minimum, "minimum TTL disagrees with the records")
    }
}
