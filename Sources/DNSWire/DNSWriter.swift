/// Appends a DNS message to a `[UInt8]`, with name compression.
///
/// SwiftNIO's verbs: `write*` appends, `set*` overwrites bytes already written (used to
/// patch counts and RDLENGTH). `set*` at an offset not yet written is a programming error
/// and traps, like an array subscript; no input data can reach it.
///
/// Allocation: the output array only (reserve once with `init(capacity:)`); the compression
/// table is a fixed inline array of 128 entries, so writing a name never allocates.
public struct DNSWriter: Sendable {
    public internal(set) var bytes: [UInt8]
    var compression = CompressionTable()

    public init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Writes over `storage` from its start, keeping its capacity: a caller that hands the
    /// same unshared array in each time (one per loop thread) writes without allocating.
    public init(reusing storage: consuming [UInt8]) {
        bytes = consume storage
        bytes.removeAll(keepingCapacity: true)
    }

    public var writerIndex: Int { bytes.count }

    // MARK: write (append)

    public mutating func writeUInt8(_ value: UInt8) {
        bytes.append(value)
    }

    public mutating func writeUInt16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    public mutating func writeUInt32(_ value: UInt32) {
        writeUInt16(UInt16(truncatingIfNeeded: value >> 16))
        writeUInt16(UInt16(truncatingIfNeeded: value))
    }

    public mutating func writeBytes(_ value: [UInt8]) {
        bytes.append(contentsOf: value)
    }

    public mutating func writeBytes(_ value: ArraySlice<UInt8>) {
        bytes.append(contentsOf: value)
    }

    // MARK: set (overwrite)

    public mutating func setUInt8(_ value: UInt8, at offset: Int) {
        bytes[offset] = value
    }

    public mutating func setUInt16(_ value: UInt16, at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value)
    }

    public mutating func setUInt32(_ value: UInt32, at offset: Int) {
        setUInt16(UInt16(truncatingIfNeeded: value >> 16), at: offset)
        setUInt16(UInt16(truncatingIfNeeded: value), at: offset + 2)
    }

    /// Drops everything from `offset` on, and forgets compression targets there, so a
    /// caller can undo a partly written item.
    public mutating func moveWriterIndex(to offset: Int) {
        precondition(offset >= 0 && offset <= bytes.count, "writer index out of range")
        bytes.removeSubrange(offset...)
        compression.forget(from: offset)
    }
}

/// Offsets of names already written, for RFC 1035 §4.1.4 compression.
///
/// Each entry packs `offset << 8 | wireLength`, where wireLength is the uncompressed length
/// of the name that starts there; lookups compare lengths first so most candidates are
/// rejected without touching the output. Entries stay in increasing offset order.
struct CompressionTable: Sendable {
    static let capacity = 128
    /// Pointers carry 14 bits of offset (RFC 1035 §4.1.4).
    static let maxOffset = 0x3FFF

    var entries = InlineArray<128, UInt32>(repeating: 0)
    var count = 0

    mutating func remember(offset: Int, length: Int) {
        guard count < Self.capacity, offset <= Self.maxOffset else { return }
        entries[count] = UInt32(offset) << 8 | UInt32(length)
        count += 1
    }

    mutating func forget(from offset: Int) {
        while count > 0, Int(entries[count - 1] >> 8) >= offset { count -= 1 }
    }
}
