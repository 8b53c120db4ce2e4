import DNSWire

/// Turns a cached upstream answer into the client's answer, mostly in place: its ID and
/// flags, its question exactly as asked (letter case included), TTLs aged and capped,
/// its OPT, and the size its transport allows.
enum CachedAnswer {
    /// RFC 8767 §4: the TTL of a stale answer.
    static let staleTTL: UInt32 = 30

    static func serve(_ entry: CacheEntry, to query: DNSQuery, age: UInt32, stale: Bool, cap: UInt32, removeECH: Bool,
                      maxSize: Int) -> [UInt8] {
        var bytes = removeECH ? (entry.withoutECH ?? entry.response) : entry.response
        if var header = try? DNSHeader(bytes) {
            header.id = query.header.id
            header.recursionDesired = query.header.recursionDesired
            header.checkingDisabled = query.header.checkingDisabled
            try? header.set(in: &bytes)
        }
        let asked = query.question.name.wire
        if entry.questionEnd == DNSHeader.byteCount + asked.count + 4, bytes.count >= entry.questionEnd {
            bytes.replaceSubrange(DNSHeader.byteCount..<(DNSHeader.byteCount + asked.count), with: asked)
        }
        if stale {
            try? DNSPacket.rewriteTTLs(in: &bytes) { _ in min(staleTTL, cap) }
        } else {
            try? DNSPacket.decrementTTLs(in: &bytes, by: age, cap: cap)
        }
        if query.edns != nil {
            let error = stale ? ExtendedDNSError(code: .staleAnswer, text: "") : nil
            appendOPT(EDNS(udpPayloadSize: AnswerBuilder.udpPayload, options: error.map { [$0.option] } ?? []), to: &bytes)
        }
        guard bytes.count > maxSize else { return bytes }
        return (try? DNSPacket.truncated(bytes, maxSize: maxSize)) ?? bytes
    }

    /// Appends an OPT record and counts it in ARCOUNT.
    static func appendOPT(_ edns: EDNS, to bytes: inout [UInt8]) {
        guard bytes.count >= DNSHeader.byteCount else { return }
        var writer = DNSWriter(capacity: 11 + edns.wireLength)
        writer.writeOPT(edns)
        bytes.append(contentsOf: writer.bytes)
        let count = (UInt16(bytes[10]) << 8 | UInt16(bytes[11])) &+ 1
        bytes[10] = UInt8(count >> 8)
        bytes[11] = UInt8(count & 0xFF)
    }
}

/// The answers of a safe-search rewrite (SPEC §4.5).
enum RewriteAnswer {
    /// The CNAME's TTL is the target's, at most this.
    static let maxCNAMETTL: UInt32 = 300

    static func cnameOnly(_ query: DNSQuery, target: DNSName, ttl: UInt32, maxSize: Int) -> [UInt8] {
        var writer = DNSMessageWriter(responseTo: query, edns: AnswerBuilder.edns(for: query, error: nil))
        writer.addRecord(ResourceRecord(name: query.question.name, ttl: ttl, rdata: .cname(target)), to: .answer)
        return writer.finish(maxSize: maxSize)
    }

    /// The CNAME to `target`, then the target's answer records, TTLs aged and capped.
    static func compose(_ query: DNSQuery, target: DNSName, from entry: CacheEntry, age: UInt32, cap: UInt32,
                        maxSize: Int) -> [UInt8] {
        let records = (try? DNSMessage.parse(entry.response))?.answers ?? []
        let aged = records.map { record -> ResourceRecord in
            var copy = record
            copy.ttl = min(record.ttl > age ? record.ttl - age : 0, cap)
            return copy
        }
        let cnameTTL = min(aged.map(\.ttl).min() ?? maxCNAMETTL, maxCNAMETTL, cap)
        var writer = DNSMessageWriter(responseTo: query, edns: AnswerBuilder.edns(for: query, error: nil))
        writer.addRecord(ResourceRecord(name: query.question.name, ttl: cnameTTL, rdata: .cname(target)), to: .answer)
        for record in aged { writer.addRecord(record, to: .answer) }
        return writer.finish(maxSize: maxSize)
    }
}
