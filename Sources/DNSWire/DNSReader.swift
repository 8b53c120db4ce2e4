/// A bounds-checked cursor over a DNS message held in a `[UInt8]`.
///
/// SwiftNIO's verbs: `read*` consumes at `readerIndex`, `get*` peeks at an absolute offset
/// and moves nothing. Every read is checked against `limit` (the end of the message, or the
/// end of the RDATA being decoded) and fails with a `DNSWireError` that names the current
/// `section` and the offset; nothing here can trap on any input.
///
/// Ownership: the reader holds the array (a retain, never a copy). Offsets in errors and in
/// results are absolute offsets in that array, which is what compression pointers use.
public struct DNSReader: Sendable {
    public let bytes: [UInt8]
    public internal(set) var readerIndex: Int
    /// Reads stop here. Narrowed while decoding one RDATA so a record cannot read its neighbour.
    public internal(set) var limit: Int
    /// Carried into `.truncated(section:offset:)` errors; parsers set it as they move on.
    public var section: DNSSection = .header

    public init(_ bytes: [UInt8], readerIndex: Int = 0) {
        self.bytes = bytes
        self.readerIndex = min(max(0, readerIndex), bytes.count)
        self.limit = bytes.count
    }

    public var readableBytes: Int { limit - readerIndex }

    @inline(__always)
    func truncated(at offset: Int) -> DNSWireError {
        .truncated(section: section, offset: offset)
    }

    // MARK: get (peek)

    public func getUInt8(at offset: Int) -> UInt8? {
        guard offset >= 0, offset < limit else { return nil }
        return bytes[offset]
    }

    public func getUInt16(at offset: Int) -> UInt16? {
        guard offset >= 0, offset <= limit - 2 else { return nil }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    public func getUInt32(at offset: Int) -> UInt32? {
        guard offset >= 0, offset <= limit - 4 else { return nil }
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16
            | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    // MARK: read (consume)

    public mutating func readUInt8() throws(DNSWireError) -> UInt8 {
        guard let value = getUInt8(at: readerIndex) else { throw truncated(at: readerIndex) }
        readerIndex += 1
        return value
    }

    public mutating func readUInt16() throws(DNSWireError) -> UInt16 {
        guard let value = getUInt16(at: readerIndex) else { throw truncated(at: readerIndex) }
        readerIndex += 2
        return value
    }

    public mutating func readUInt32() throws(DNSWireError) -> UInt32 {
        guard let value = getUInt32(at: readerIndex) else { throw truncated(at: readerIndex) }
        readerIndex += 4
        return value
    }

    /// Copies `count` bytes out (one allocation unless `count` is 0).
    public mutating func readBytes(_ count: Int) throws(DNSWireError) -> [UInt8] {
        guard count >= 0, count <= readableBytes else { throw truncated(at: readerIndex) }
        defer { readerIndex += count }
        return count == 0 ? [] : Array(bytes[readerIndex..<readerIndex + count])
    }

    public mutating func skipBytes(_ count: Int) throws(DNSWireError) {
        guard count >= 0, count <= readableBytes else { throw truncated(at: readerIndex) }
        readerIndex += count
    }

    /// Runs `body` with reads confined to the next `length` bytes and requires it to consume
    /// them exactly. Used for RDATA and OPT options, whose length the record states.
    mutating func withLimit<T>(
        _ length: Int, overrun: DNSWireError, _ body: (inout DNSReader) throws(DNSWireError) -> T
    ) throws(DNSWireError) -> T {
        guard length >= 0, length <= readableBytes else { throw truncated(at: readerIndex) }
        let saved = limit
        limit = readerIndex + length
        defer { limit = saved }
        let value: T
        do throws(DNSWireError) {
            value = try body(&self)
        } catch {
            // Running out inside the window means the stated length was too small for the content.
            if case .truncated = error { throw overrun }
            throw error
        }
        guard readerIndex == limit else { throw overrun }
        return value
    }
}
