/// One resource record (RFC 1035 §4.1.3): a plain value, no class hierarchy, no boxing.
///
/// The TYPE is not stored: it is `rdata.type`, so a record cannot claim one type and carry
/// another's data. RDATA that holds names is decoded (see `RData`), which is what lets a
/// parsed record be written again at another offset with compression redone.
public struct ResourceRecord: Hashable, Sendable, CustomStringConvertible {
    public var name: DNSName
    public var dnsClass: DNSClass
    /// Seconds (RFC 1035 §3.2.1). RFC 2181 §8: a value with the top bit set means zero.
    public var ttl: UInt32
    public var rdata: RData

    public init(name: DNSName, dnsClass: DNSClass = .in, ttl: UInt32, rdata: RData) {
        self.name = name
        self.dnsClass = dnsClass
        self.ttl = ttl
        self.rdata = rdata
    }

    public var type: DNSType { rdata.type }

    /// `example.com 300 IN A 192.0.2.1`, for logs.
    public var description: String { "\(name) \(ttl) \(dnsClass) \(type) \(rdata)" }

    /// Same owner (ignoring case), class and type: the records belong to one RRset
    /// (RFC 2181 §5), which truncation never splits.
    public func isSameRRSet(as other: ResourceRecord) -> Bool {
        type == other.type && dnsClass == other.dnsClass && name == other.name
    }
}

/// The fixed fields in front of RDATA, read before deciding what the record is (OPT or not).
struct RecordPrefix {
    var offset: Int
    var name: DNSName
    var type: DNSType
    var dnsClass: DNSClass
    var ttl: UInt32
    var rdataLength: Int
}

extension DNSReader {
    mutating func readRecordPrefix() throws(DNSWireError) -> RecordPrefix {
        let offset = readerIndex
        let name = try readName()
        return RecordPrefix(
            offset: offset, name: name, type: DNSType(try readUInt16()), dnsClass: DNSClass(try readUInt16()),
            ttl: try readUInt32(), rdataLength: Int(try readUInt16()))
    }

    /// Reads one record that is not OPT (the message parser intercepts OPT; here it would
    /// come back as `.unknown`).
    public mutating func readRecord() throws(DNSWireError) -> ResourceRecord {
        let prefix = try readRecordPrefix()
        let rdata = try readRData(type: prefix.type, dnsClass: prefix.dnsClass, length: prefix.rdataLength)
        return ResourceRecord(name: prefix.name, dnsClass: prefix.dnsClass, ttl: prefix.ttl, rdata: rdata)
    }
}

extension DNSWriter {
    public mutating func writeRecord(_ record: ResourceRecord, compress: Bool = true) {
        writeName(record.name, compress: compress)
        writeUInt16(record.type.rawValue)
        writeUInt16(record.dnsClass.rawValue)
        writeUInt32(record.ttl)
        writeRData(record.rdata, compress: compress)
    }
}
