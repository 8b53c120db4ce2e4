/// One local time type of a zone: an offset, whether it is daylight time, and its name.
struct LocalTimeType: Sendable, Equatable {
    /// Seconds east of UTC.
    let offset: Int32
    let isDaylight: Bool
    let abbreviation: String
}

/// The parts of a TZif file that define local time (RFC 8536), already validated:
/// transitions strictly ascending, every type index in range, at least one type.
struct TZifData: Sendable, Equatable {
    var transitions: [Int64] = []
    /// Index into `types` of the type in force from each transition on.
    var transitionTypes: [UInt8] = []
    var types: [LocalTimeType] = []
    /// The footer TZ string of a v2+ file, "" when it gives none; nil for a v1 file.
    var footer: String?
}

/// A strict TZif reader: every count is checked against the bytes left before anything
/// is read, so bad input of any shape is reported as `.malformed`, never trapped on.
enum TZif {
    static func parse(_ bytes: [UInt8], name: String) throws(ZoneError) -> TZifData {
        var reader = Reader(bytes: bytes, name: name)
        let first = try reader.header()
        if first.version == 0 {
            return try reader.data(first, timeSize: 4)  // v1 only: 32-bit data
        }
        // v2+: the v1 block repeats the data in 32 bits for old readers; skip it.
        try reader.skip(first.dataSize(timeSize: 4), for: "version 1 data block")
        let second = try reader.header()
        guard second.version != 0 else { throw reader.failure("second header has version 1") }
        var data = try reader.data(second, timeSize: 8)
        data.footer = try reader.footer()
        return data
    }
}

private struct Header {
    var version: UInt8 = 0
    var isUTCount = 0, isStandardCount = 0, leapCount = 0, timeCount = 0, typeCount = 0, charCount = 0

    func dataSize(timeSize: Int) -> Int {
        timeCount * timeSize + timeCount + typeCount * 6 + charCount
            + leapCount * (timeSize + 4) + isStandardCount + isUTCount
    }
}

private struct Reader {
    let bytes: [UInt8]
    let name: String
    var position = 0

    var remaining: Int { bytes.count - position }

    func failure(_ reason: String) -> ZoneError {
        .malformed(name: name, reason: "\(reason) (byte \(position) of \(bytes.count))")
    }

    mutating func skip(_ count: Int, for what: String) throws(ZoneError) {
        try need(count, for: what)
        position += count
    }

    func need(_ count: Int, for what: String) throws(ZoneError) {
        guard count <= remaining else {
            throw failure("truncated: \(what) needs \(count) bytes, \(remaining) left")
        }
    }

    /// Callers have checked the length with `need`.
    mutating func uint8() -> UInt8 {
        defer { position += 1 }
        return bytes[position]
    }

    mutating func uint32() -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 { value = value << 8 | UInt32(uint8()) }
        return value
    }

    mutating func int64(size: Int) -> Int64 {
        if size == 4 { return Int64(Int32(bitPattern: uint32())) }
        return Int64(bitPattern: UInt64(uint32()) << 32 | UInt64(uint32()))
    }

    mutating func header() throws(ZoneError) -> Header {
        try need(44, for: "header")
        guard bytes[position..<position + 4].elementsEqual("TZif".utf8) else {
            throw failure("bad magic, not a TZif file")
        }
        position += 4
        var header = Header()
        header.version = uint8()
        // Version 0 is v1; '2', '3', '4' are defined and later digits promise compatibility.
        guard header.version == 0 || (UInt8(ascii: "2")...UInt8(ascii: "9")).contains(header.version) else {
            throw failure("unknown version byte \(header.version)")
        }
        position += 15
        header.isUTCount = Int(uint32())
        header.isStandardCount = Int(uint32())
        header.leapCount = Int(uint32())
        header.timeCount = Int(uint32())
        header.typeCount = Int(uint32())
        header.charCount = Int(uint32())
        guard header.typeCount > 0 else { throw failure("no local time types") }
        guard header.charCount > 0 else { throw failure("no designation characters") }
        guard header.isUTCount == 0 || header.isUTCount == header.typeCount,
            header.isStandardCount == 0 || header.isStandardCount == header.typeCount
        else {
            throw failure("UT/standard indicator counts do not match the type count")
        }
        return header
    }

    mutating func data(_ header: Header, timeSize: Int) throws(ZoneError) -> TZifData {
        try need(header.dataSize(timeSize: timeSize), for: "data block")
        var data = TZifData()
        data.transitions.reserveCapacity(header.timeCount)
        for _ in 0..<header.timeCount {
            let time = int64(size: timeSize)
            if let previous = data.transitions.last, time <= previous {
                throw failure("transition times not strictly ascending")
            }
            data.transitions.append(time)
        }
        data.transitionTypes.reserveCapacity(header.timeCount)
        for _ in 0..<header.timeCount {
            let index = uint8()
            guard Int(index) < header.typeCount else {
                throw failure("transition type index \(index) ≥ type count \(header.typeCount)")
            }
            data.transitionTypes.append(index)
        }
        var raw: [(offset: Int32, isDaylight: UInt8, designation: Int)] = []
        for _ in 0..<header.typeCount {
            raw.append((Int32(bitPattern: uint32()), uint8(), Int(uint8())))
        }
        let characters = bytes[position..<position + header.charCount]
        for type in raw {
            guard type.offset != Int32.min else { throw failure("UT offset -2^31 is not allowed") }
            guard type.isDaylight <= 1 else { throw failure("DST flag \(type.isDaylight) is neither 0 nor 1") }
            guard type.designation < header.charCount,
                let end = characters[(characters.startIndex + type.designation)...].firstIndex(of: 0)
            else {
                throw failure("designation index \(type.designation) has no NUL-terminated name")
            }
            let abbreviation = String(
                decoding: characters[(characters.startIndex + type.designation)..<end], as: UTF8.self)
            data.types.append(
                LocalTimeType(offset: type.offset, isDaylight: type.isDaylight == 1, abbreviation: abbreviation))
        }
        // Leap-second records and the standard/UT indicators do not affect local time.
        position += header.charCount + header.leapCount * (timeSize + 4) + header.isStandardCount + header.isUTCount
        return data
    }

    mutating func footer() throws(ZoneError) -> String {
        try need(1, for: "footer")
        guard uint8() == UInt8(ascii: "\n") else { throw failure("footer does not start with a newline") }
        guard let end = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) else {
            throw failure("footer has no closing newline")
        }
        defer { position = end + 1 }
        return String(decoding: bytes[position..<end], as: UTF8.self)
    }
}
