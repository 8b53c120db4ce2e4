// Removing the `ech` SvcParam (docs/dns.md#answer-inspection): without ECH the client sends the real site name
// in its TLS SNI, which the HTTP proxy checks. This invalidates any RRSIG over the record,
// which the gateway accepts (the same page says why).

extension RData.SVCB {
    /// Removes `key` and returns whether it was present. If `mandatory` listed the key, it is
    /// dropped from that list too (and `mandatory` itself when the list empties), because
    /// RFC 9460 §8 makes a record whose mandatory key is missing malformed, and a client
    /// would then reject the whole RRset rather than connect without the key.
    @discardableResult
    public mutating func removeParam(_ key: SvcParamKey) -> Bool {
        guard let range = Self.paramRange(key, in: paramBytes) else { return false }
        paramBytes.removeSubrange(range)
        if key != .mandatory, let mandatory = Self.paramRange(.mandatory, in: paramBytes) {
            let listStart = mandatory.lowerBound + 4
            var position = listStart
            while position < mandatory.upperBound {
                if UInt16(paramBytes[position]) << 8 | UInt16(paramBytes[position + 1]) == key.rawValue {
                    if mandatory.count == 6 {
                        paramBytes.removeSubrange(mandatory)
                    } else {
                        paramBytes.removeSubrange(position..<position + 2)
                        let length = mandatory.count - 4 - 2
                        paramBytes[mandatory.lowerBound + 2] = UInt8(length >> 8)
                        paramBytes[mandatory.lowerBound + 3] = UInt8(length & 0xFF)
                    }
                    break
                }
                position += 2
            }
        }
        return true
    }

    /// The bytes of one param, its 4-byte key and length included.
    static func paramRange(_ key: SvcParamKey, in bytes: [UInt8]) -> Range<Int>? {
        var index = 0
        while index + 4 <= bytes.count {
            let end = index + 4 + (Int(bytes[index + 2]) << 8 | Int(bytes[index + 3]))
            if UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]) == key.rawValue { return index..<end }
            index = end
        }
        return nil
    }

    /// New RDATA without the `ech` key, or `nil` when `rdata` has none (nothing to copy).
    /// The other params keep their order, and the result is one RDATA, so the caller writes
    /// its new length as RDLENGTH.
    public static func removingECH(fromRData rdata: [UInt8]) throws(DNSWireError) -> [UInt8]? {
        var svcb = try RData.SVCB(rdata: rdata)
        guard svcb.removeParam(.ech) else { return nil }
        return svcb.rdata
    }
}

extension DNSMessage {
    /// Removes `ech` from every SVCB and HTTPS record in every section (an HTTPS record in
    /// the additional section would serve the client just as well). Returns whether any
    /// record changed, so an unchanged upstream answer can be forwarded as it came.
    public mutating func removeECH() -> Bool {
        var changed = false
        for index in answers.indices { changed = Self.removeECH(&answers[index]) || changed }
        for index in authorities.indices { changed = Self.removeECH(&authorities[index]) || changed }
        for index in additionals.indices { changed = Self.removeECH(&additionals[index]) || changed }
        return changed
    }

    private static func removeECH(_ record: inout ResourceRecord) -> Bool {
        switch record.rdata {
        case .svcb(var svcb):
            guard svcb.removeParam(.ech) else { return false }
            record.rdata = .svcb(svcb)
        case .https(var svcb):
            guard svcb.removeParam(.ech) else { return false }
            record.rdata = .https(svcb)
        default:
            return false
        }
        return true
    }
}

extension DNSPacket {
    /// `removeECH` on a serialized message: first a scan that allocates nothing, and only
    /// when some SVCB/HTTPS record carries `ech` a full parse and rewrite (the bytes after
    /// the record move, so compression pointers must be redone). Returns `nil` when the
    /// message has no `ech`, so the caller keeps (and forwards) its own bytes.
    public static func removingECH(from packet: [UInt8]) throws(DNSWireError) -> [UInt8]? {
        var cursor = try DNSRecordCursor(packet)
        var found = false
        while let record = try cursor.next(in: packet) {
            guard !found, record.type == .svcb || record.type == .https else { continue }
            found = Self.svcbRData(packet, record.rdataRange, hasKey: .ech)
        }
        guard found else { return nil }
        var message = try DNSMessage.parse(packet)
        _ = message.removeECH()
        return message.serialized()
    }

    /// Whether SVCB RDATA at `range` carries `key`; a malformed RDATA answers false here and
    /// is rejected by the full parse if anything else leads to one.
    static func svcbRData(_ packet: [UInt8], _ range: Range<Int>, hasKey key: SvcParamKey) -> Bool {
        var reader = DNSReader(packet, readerIndex: range.lowerBound + 2)
        reader.limit = range.upperBound
        guard (try? reader.readNameUncompressed()) != nil else { return false }
        var index = reader.readerIndex
        while index + 4 <= range.upperBound {
            if UInt16(packet[index]) << 8 | UInt16(packet[index + 1]) == key.rawValue { return true }
            index += 4 + (Int(packet[index + 2]) << 8 | Int(packet[index + 3]))
        }
        return false
    }
}
