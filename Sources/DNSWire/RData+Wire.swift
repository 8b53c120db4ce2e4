// RDATA on the wire. Reading is confined to RDLENGTH bytes (DNSReader.withLimit), so a
// record can neither read into its neighbour nor leave bytes unread: either is
// `.rdataLength`. Names inside RDATA may still point anywhere earlier in the message.

extension DNSReader {
    /// Decodes RDATA of `length` bytes at `readerIndex` and moves past it.
    /// `length` past the end of the message is `.truncated`; content that does not fit
    /// `length` exactly is `.rdataLength`.
    public mutating func readRData(type: DNSType, dnsClass: DNSClass, length: Int) throws(DNSWireError) -> RData {
        let start = readerIndex
        guard length <= readableBytes else { throw truncated(at: start) }
        // RFC 2136 §2.5: UPDATE uses empty RDATA in classes ANY and NONE for any type.
        if length == 0, dnsClass == .any || dnsClass == .none {
            return .unknown(type: type, bytes: [])
        }
        return try withLimit(length, overrun: .rdataLength(type: type, offset: start)) {
            (reader: inout DNSReader) throws(DNSWireError) -> RData in
            try reader.decodeRData(type: type, dnsClass: dnsClass, length: length)
        }
    }

    private mutating func decodeRData(type: DNSType, dnsClass: DNSClass, length: Int) throws(DNSWireError) -> RData {
        switch type {
        case .a where dnsClass == .in:
            return .a(RData.IPv4(try readUInt32()))
        case .aaaa where dnsClass == .in:
            let high = UInt64(try readUInt32()) << 32 | UInt64(try readUInt32())
            let low = UInt64(try readUInt32()) << 32 | UInt64(try readUInt32())
            return .aaaa(RData.IPv6(high: high, low: low))
        case .ns: return .ns(try readName())
        case .cname: return .cname(try readName())
        case .ptr: return .ptr(try readName())
        case .dname: return .dname(try readName())
        case .mx:
            return .mx(RData.MX(preference: try readUInt16(), exchange: try readName()))
        case .soa:
            return .soa(
                RData.SOA(
                    mname: try readName(), rname: try readName(), serial: try readUInt32(),
                    refresh: try readUInt32(), retry: try readUInt32(), expire: try readUInt32(),
                    minimum: try readUInt32()))
        case .srv:
            return .srv(
                RData.SRV(
                    priority: try readUInt16(), weight: try readUInt16(), port: try readUInt16(),
                    target: try readName()))
        case .svcb: return .svcb(try readSVCB())
        case .https: return .https(try readSVCB())
        case .txt: return .txt(try readBytes(length))
        default: return .unknown(type: type, bytes: try readBytes(length))
        }
    }
}

extension DNSWriter {
    /// Appends RDLENGTH and RDATA. Names are compressed only where RFC 3597 §4 allows it
    /// (the RFC 1035 types NS, CNAME, PTR, MX, SOA) and `compress` is set.
    public mutating func writeRData(_ rdata: RData, compress: Bool = true) {
        let lengthOffset = writerIndex
        writeUInt16(0)
        switch rdata {
        case .a(let address):
            writeUInt32(address.value)
        case .aaaa(let address):
            writeUInt32(UInt32(truncatingIfNeeded: address.high >> 32))
            writeUInt32(UInt32(truncatingIfNeeded: address.high))
            writeUInt32(UInt32(truncatingIfNeeded: address.low >> 32))
            writeUInt32(UInt32(truncatingIfNeeded: address.low))
        case .ns(let name), .cname(let name), .ptr(let name):
            writeName(name, compress: compress)
        case .dname(let name):
            writeName(name, compress: false)
        case .mx(let mx):
            writeUInt16(mx.preference)
            writeName(mx.exchange, compress: compress)
        case .soa(let soa):
            writeName(soa.mname, compress: compress)
            writeName(soa.rname, compress: compress)
            writeUInt32(soa.serial)
            writeUInt32(soa.refresh)
            writeUInt32(soa.retry)
            writeUInt32(soa.expire)
            writeUInt32(soa.minimum)
        case .srv(let srv):
            writeUInt16(srv.priority)
            writeUInt16(srv.weight)
            writeUInt16(srv.port)
            writeName(srv.target, compress: false)
        case .svcb(let svcb), .https(let svcb):
            writeSVCB(svcb)
        case .txt(let bytes), .unknown(_, let bytes):
            writeBytes(bytes)
        }
        let length = writerIndex - lengthOffset - 2
        precondition(length <= 0xFFFF, "RDATA longer than 65535 bytes")
        setUInt16(UInt16(length), at: lengthOffset)
    }
}
