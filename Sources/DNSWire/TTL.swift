// TTLs on serialized answers, for the cache (docs/dns.md#cache): decrement on the way out, cap at
// the client's next cutoff, stale TTL for serve-stale (RFC 8767 §4). Done in place: a TTL
// is a fixed 4-byte field, so no length and no compression pointer changes. The OPT
// record's TTL field is not a TTL (RFC 6891 §6.1.3) and is never touched.

extension DNSPacket {
    /// Replaces every record's TTL with `transform(ttl)`, in place and without allocating.
    /// The whole message is validated first, so a malformed one is left unchanged.
    public static func rewriteTTLs(in packet: inout [UInt8], _ transform: (UInt32) -> UInt32) throws(DNSWireError) {
        var check = try DNSRecordCursor(packet)
        while try check.next(in: packet) != nil {}
        var cursor = try DNSRecordCursor(packet)
        while let record = try cursor.next(in: packet) {
            guard record.type != .opt else { continue }
            let ttl = transform(record.ttl)
            packet[record.ttlOffset] = UInt8(truncatingIfNeeded: ttl >> 24)
            packet[record.ttlOffset + 1] = UInt8(truncatingIfNeeded: ttl >> 16)
            packet[record.ttlOffset + 2] = UInt8(truncatingIfNeeded: ttl >> 8)
            packet[record.ttlOffset + 3] = UInt8(truncatingIfNeeded: ttl)
        }
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
