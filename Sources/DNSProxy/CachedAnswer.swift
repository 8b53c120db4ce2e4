import DNSWire

/// Turns a cached upstream answer into the client's answer, mostly in place: its ID and
/// flags, its question exactly as asked (letter case included), TTLs aged and capped,
/// its OPT, and the size its transport allows.
enum CachedAnswer {
    /// RFC 8767 §4: the TTL of a stale answer.
    static let staleTTL: UInt32 = 30

    static func serve(
        _ entry: CacheEntry, to query: DNSQuery, age: UInt32, stale: Bool, cap: UInt32, removeECH: Bool,
        maxSize: Int
    ) -> [UInt8] {
        Serving(
            entry: entry, query: query, age: age, stale: stale, cap: cap, removeECH: removeECH, maxSize: maxSize,
            error: nil
        )
        .bytes
    }

    /// One cached answer for one query, written either into a send slot or into an array.
    struct Serving {
        let entry: CacheEntry
        let query: DNSQuery
        let age: UInt32
        let stale: Bool
        let cap: UInt32
        let removeECH: Bool
        let maxSize: Int
        /// Why records were removed (docs/dns.md#what-answers-may-carry), sent in the OPT.
        let error: ExtendedDNSError?

        private var stripped: CacheEntry.Stripped? { removeECH ? entry.stripped : nil }
        private var source: [UInt8] { stripped?.response ?? entry.response }
        private var offsets: TTLOffsets { stripped?.ttlOffsets ?? entry.ttlOffsets }

        /// Into `space`, for a fresh answer that fits whole with our plain OPT; nil otherwise.
        func write(into space: UnsafeMutableRawBufferPointer) -> Int? {
            let source = source
            let record = CachedAnswer.optRecord(for: query)
            let opt = query.edns == nil ? 0 : record.count
            let total = source.count + opt
            guard !stale, error == nil, source.count >= DNSHeader.byteCount, total <= maxSize, total <= space.count
            else {
                return nil
            }
            source.withUnsafeBytes { space.copyMemory(from: $0) }
            patch(UnsafeMutableRawBufferPointer(rebasing: space[..<source.count]))
            if opt > 0 {
                record.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: space[source.count...]).copyMemory(from: $0)
                }
                countOPT(in: space)
            }
            return total
        }

        var bytes: [UInt8] {
            var bytes = source
            guard bytes.count >= DNSHeader.byteCount else { return bytes }
            bytes.withUnsafeMutableBytes { patch($0) }
            if let asked = query.edns {
                if stale || error != nil {
                    let errors = (stale ? [ExtendedDNSError(code: .staleAnswer)] : []) + (error.map { [$0] } ?? [])
                    let edns = EDNS.answering(
                        asked, udpPayloadSize: AnswerBuilder.udpPayload, options: errors.map(\.option))
                    appendOPT(edns, to: &bytes)
                } else {
                    appendOPT(optRecord(for: query), to: &bytes)
                }
            }
            guard bytes.count > maxSize else { return bytes }
            return (try? DNSPacket.truncated(bytes, maxSize: maxSize)) ?? bytes
        }

        /// The cached copy made the client's: its ID, RD and CD, the flags of a recursive
        /// server's answer, its question's letter case, TTLs aged and capped.
        ///
        /// AA cleared and RA set whatever the upstream said: the answer comes from this
        /// server's cache, not from a zone it serves (RFC 1035 §4.1.1), and an upstream
        /// that is authoritative says AA=1, RA=0. Z cleared (RFC 1035 §4.1.1). The
        /// upstream's AD stays only for a client that set DO or AD (RFC 6840 §5.7); an
        /// answer this server changed has it cleared already (`CacheEntry`).
        private func patch(_ bytes: UnsafeMutableRawBufferPointer) {
            let header = query.header
            bytes[0] = UInt8(header.id >> 8)
            bytes[1] = UInt8(header.id & 0xFF)
            bytes[2] = bytes[2] & ~0x05 | (header.recursionDesired ? 0x01 : 0)
            let readsAD = header.authenticData || query.edns?.dnssecOK == true
            bytes[3] = bytes[3] & ~(readsAD ? 0x50 : 0x70) | 0x80 | (header.checkingDisabled ? 0x10 : 0)
            let asked = query.question.name.wire
            if entry.questionEnd == DNSHeader.byteCount + asked.count + 4, bytes.count >= entry.questionEnd {
                // Same length: same name.
                for index in 0..<asked.count { bytes[DNSHeader.byteCount + index] = asked[index] }
            }
            let offsets = offsets
            for position in 0..<offsets.count where offsets[position] + 4 <= bytes.count {
                let offset = offsets[position]
                let stored =
                    UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
                    | UInt32(bytes[offset + 3])
                let ttl = stale ? min(staleTTL, cap) : min(stored > age ? stored - age : 0, cap)
                bytes[offset] = UInt8(truncatingIfNeeded: ttl >> 24)
                bytes[offset + 1] = UInt8(truncatingIfNeeded: ttl >> 16)
                bytes[offset + 2] = UInt8(truncatingIfNeeded: ttl >> 8)
                bytes[offset + 3] = UInt8(truncatingIfNeeded: ttl)
            }
        }
    }

    /// Our OPT record without options, as bytes, with DO clear and with DO set: the one
    /// for `query` copies its DO (RFC 3225 §3).
    static let plainOPT: [UInt8] = opt(dnssecOK: false)
    static let plainOPTWithDO: [UInt8] = opt(dnssecOK: true)

    static func optRecord(for query: DNSQuery) -> [UInt8] {
        query.edns?.dnssecOK == true ? plainOPTWithDO : plainOPT
    }

    private static func opt(dnssecOK: Bool) -> [UInt8] {
        var writer = DNSWriter(capacity: 11)
        writer.writeOPT(EDNS(udpPayloadSize: AnswerBuilder.udpPayload, dnssecOK: dnssecOK))
        return writer.bytes
    }

    static func appendOPT(_ opt: [UInt8], to bytes: inout [UInt8]) {
        bytes.append(contentsOf: opt)
        bytes.withUnsafeMutableBytes { countOPT(in: $0) }
    }

    /// One more record in ARCOUNT, for the OPT just appended.
    static func countOPT(in bytes: UnsafeMutableRawBufferPointer) {
        let count = (UInt16(bytes[10]) << 8 | UInt16(bytes[11])) &+ 1
        bytes[10] = UInt8(count >> 8)
        bytes[11] = UInt8(count & 0xFF)
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

/// The answers of a safe-search rewrite (docs/dns.md#safe-search-rewrites).
enum RewriteAnswer {
    /// The CNAME's TTL is the target's, at most this.
    static let maxCNAMETTL: UInt32 = 300

    static func cnameOnly(_ query: DNSQuery, target: DNSName, ttl: UInt32, maxSize: Int) -> [UInt8] {
        var writer = DNSMessageWriter(responseTo: query, edns: AnswerBuilder.edns(for: query, error: nil))
        writer.addRecord(ResourceRecord(name: query.question.name, ttl: ttl, rdata: .cname(target)), to: .answer)
        return writer.finish(maxSize: maxSize)
    }

    /// `compose` for a fresh answer, written over `storage` with the records copied from the
    /// cached bytes (their names read into `names`), so a loop that reuses both allocates
    /// nothing. Nil when the cached answer holds a record `DNSMessageWriter.addRecord(copying:)`
    /// does not copy: `compose` then decodes it.
    static func compose(
        _ query: DNSQuery, target: DNSName, from entry: CacheEntry, age: UInt32, cap: UInt32, maxSize: Int,
        reusing storage: consuming [UInt8], names: inout [UInt8]
    ) -> [UInt8]? {
        let response = entry.response
        guard var cursor = try? DNSRecordCursor(response) else { return nil }
        let start = cursor
        var lowest = maxCNAMETTL
        while let record = try? cursor.next(in: response), record.section == .answer {
            guard record.type == .a || record.type == .aaaa || record.type == .cname else { return nil }
            lowest = min(lowest, min(record.ttl > age ? record.ttl - age : 0, cap))
        }
        var writer = DNSMessageWriter(
            responseTo: query, edns: AnswerBuilder.edns(for: query), reusing: consume storage)
        writer.addRecord(
            ResourceRecord(name: query.question.name, ttl: min(lowest, cap), rdata: .cname(target)), to: .answer)
        cursor = start
        while let record = try? cursor.next(in: response), record.section == .answer {
            let ttl = min(record.ttl > age ? record.ttl - age : 0, cap)
            guard writer.addRecord(copying: record, of: response, ttl: ttl, to: .answer, names: &names) else {
                return nil
            }
        }
        // Consumed, not copied: a copy's bytes changed would be an array of their own.
        return (consume writer).finish(maxSize: maxSize)
    }

    /// The CNAME to `target`, then the target's answer records, TTLs aged and capped; a
    /// stale target answer is served with the stale TTL and EDE 3, as any stale answer.
    static func compose(
        _ query: DNSQuery, target: DNSName, from entry: CacheEntry, age: UInt32, stale: Bool, cap: UInt32,
        maxSize: Int
    ) -> [UInt8] {
        let records = (try? DNSMessage.parse(entry.response))?.answers ?? []
        let aged = records.map { record -> ResourceRecord in
            var copy = record
            copy.ttl = stale ? min(CachedAnswer.staleTTL, cap) : min(record.ttl > age ? record.ttl - age : 0, cap)
            return copy
        }
        let cnameTTL = min(aged.map(\.ttl).min() ?? maxCNAMETTL, maxCNAMETTL, cap)
        let error = stale ? ExtendedDNSError(code: .staleAnswer) : nil
        var writer = DNSMessageWriter(responseTo: query, edns: AnswerBuilder.edns(for: query, error: error))
        writer.addRecord(ResourceRecord(name: query.question.name, ttl: cnameTTL, rdata: .cname(target)), to: .answer)
        for record in aged { writer.addRecord(record, to: .answer) }
        return writer.finish(maxSize: maxSize)
    }
}
