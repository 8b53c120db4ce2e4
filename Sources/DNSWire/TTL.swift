// TTLs on serialized answers, for the cache (docs/dns.md#cache): decrement on the way out, cap at
// the client's next cutoff, stale TTL for serve-stale (RFC 8767 §4). Done in place: a TTL
// is a fixed 4-byte field, so no length and no compression pointer changes (unless a hostile
// pointer runs a name through one: see `rewriteTTLs`). The OPT record's TTL field is not a
// TTL (RFC 6891 §6.1.3) and is never touched.

extension DNSPacket {
    /// Replaces every record's TTL with `transform(ttl)`, in place. The whole message is
    /// parsed first, so a malformed one is left unchanged.
    ///
    /// In place is only safe while no name runs through a TTL field. A real compressor
    /// points only at names, but a hostile upstream can point a name into a record's fixed
    /// fields (found by the dns-answer fuzz target), and that name would change with the TTL;
    /// then the message is written afresh instead, so every name stays what was parsed.
    public static func rewriteTTLs(in packet: inout [UInt8], _ transform: (UInt32) -> UInt32) throws(DNSWireError) {
        var expected = try DNSMessage.parse(packet)
        var offsets: [Int] = []
        var cursor = try DNSRecordCursor(packet)
        while let record = try cursor.next(in: packet) {
            if record.type != .opt { offsets.append(record.ttlOffset) }
        }
        for index in expected.answers.indices { expected.answers[index].ttl = transform(expected.answers[index].ttl) }
        for index in expected.authorities.indices {
            expected.authorities[index].ttl = transform(expected.authorities[index].ttl)
        }
        for index in expected.additionals.indices {
            expected.additionals[index].ttl = transform(expected.additionals[index].ttl)
        }
        var edited = packet
        for offset in offsets {
            let ttl = transform(
                UInt32(edited[offset]) << 24 | UInt32(edited[offset + 1]) << 16 | UInt32(edited[offset + 2]) << 8
                    | UInt32(edited[offset + 3]))
            edited[offset] = UInt8(truncatingIfNeeded: ttl >> 24)
            edited[offset + 1] = UInt8(truncatingIfNeeded: ttl >> 16)
            edited[offset + 2] = UInt8(truncatingIfNeeded: ttl >> 8)
            edited[offset + 3] = UInt8(truncatingIfNeeded: ttl)
        }
        // Compared byte for byte: equality ignores letter case, which a TTL byte can change too.
        let exact = expected.serialized(maxSize: .max, compress: false)
        guard let again = try? DNSMessage.parse(edited), again.serialized(maxSize: .max, compress: false) == exact
        else {
            packet = expected.serialized(maxSize: .max)
            return
        }
        packet = edited
    }

    /// Ages every TTL by `elapsed` seconds (not below 0) and caps it at `cap`. A TTL with
    /// the top bit set counts as 0 (RFC 2181 §8).
    public static func decrementTTLs(
        in packet: inout [UInt8], by elapsed: UInt32, cap: UInt32 = .max
    )
        throws(DNSWireError)
    {
        try rewriteTTLs(in: &packet) { ttl in
            let sane = ttl > 0x7FFF_FFFF ? 0 : ttl
            return min(sane > elapsed ? sane - elapsed : 0, cap)
        }
    }

    /// The smallest TTL of any record but OPT (top-bit values count as 0), or `nil` for a
    /// message without records: how long a cached copy of the whole message stays fresh.
    /// For negative answers see `DNSMessage.negativeCacheTTL`.
    public static func minimumTTL(in packet: [UInt8]) throws(DNSWireError) -> UInt32? {
        var cursor = try DNSRecordCursor(packet)
        var minimum: UInt32?
        while let record = try cursor.next(in: packet) {
            guard record.type != .opt else { continue }
            let ttl = record.ttl > 0x7FFF_FFFF ? 0 : record.ttl
            minimum = min(minimum ?? ttl, ttl)
        }
        return minimum
    }
}

extension DNSMessage {
    /// RFC 2308 §5: a negative answer is cached for the lesser of the SOA record's TTL and
    /// its MINIMUM field. `nil` when the authority section has no SOA.
    public var negativeCacheTTL: UInt32? {
        for record in authorities {
            if let soa = record.rdata.soa { return min(record.ttl, soa.minimum) }
        }
        return nil
    }
}
