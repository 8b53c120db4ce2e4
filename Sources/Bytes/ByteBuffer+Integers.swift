/// Byte order of an integer in a buffer. Network protocols (DNS, TLS records) are big-endian.
public enum Endianness: Sendable {
    case big
    case little
}

/// Integer verbs, big-endian unless told otherwise. Loads and stores are unaligned-safe, so
/// a `UInt16` may sit at any offset (DNS fields do). Inlinable: specialised where they are
/// used, they are a load and a byte swap; called generically from another module, each
/// looked the integer type's metadata up at run time.
extension ByteBuffer {
    @inlinable
    public func getInteger<T: FixedWidthInteger>(
        at index: Int, endianness: Endianness = .big, as type: T.Type = T.self
    ) -> T? {
        let size = MemoryLayout<T>.size
        guard isReadable(at: index, length: size) else { return nil }
        let raw = storage.bytes.loadUnaligned(fromByteOffset: index, as: T.self)
        return endianness == .big ? T(bigEndian: raw) : T(littleEndian: raw)
    }

    @inlinable
    public mutating func readInteger<T: FixedWidthInteger>(
        endianness: Endianness = .big, as type: T.Type = T.self
    ) -> T? {
        guard let value = getInteger(at: readerIndex, endianness: endianness, as: T.self) else { return nil }
        moveReaderIndex(forwardBy: MemoryLayout<T>.size)
        return value
    }

    @inlinable
    @discardableResult
    public mutating func writeInteger<T: FixedWidthInteger>(_ value: T, endianness: Endianness = .big) -> Int {
        let size = MemoryLayout<T>.size
        prepareForWriting(extra: size)
        storage.bytes.storeBytes(
            of: endianness == .big ? value.bigEndian : value.littleEndian, toByteOffset: writerIndex, as: T.self)
        moveWriterIndex(by: size)
        return size
    }

    /// Overwrites a readable integer in place, e.g. a length written as a placeholder.
    @inlinable
    @discardableResult
    public mutating func setInteger<T: FixedWidthInteger>(
        _ value: T, at index: Int, endianness: Endianness = .big
    ) -> Bool {
        guard isReadable(at: index, length: MemoryLayout<T>.size) else { return false }
        prepareForWriting(extra: 0)
        storage.bytes.storeBytes(
            of: endianness == .big ? value.bigEndian : value.littleEndian, toByteOffset: index, as: T.self)
        return true
    }
}
