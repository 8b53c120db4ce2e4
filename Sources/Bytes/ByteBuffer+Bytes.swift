import Glibc

/// Byte and string verbs. `write*` appends and returns the count written; `read*` consumes
/// and returns `nil` when fewer bytes are readable than asked for (nothing is consumed
/// then); `get*` peeks at an absolute index inside the readable bytes; `set*` overwrites
/// readable bytes and returns `false` (changing nothing) when the range is not readable.
extension ByteBuffer {
    // MARK: write (append)

    @discardableResult
    public mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard bytes.count > 0 else { return 0 }
        prepareForWriting(extra: bytes.count)
        (storage.bytes + writerIndex).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        moveWriterIndex(by: bytes.count)
        return bytes.count
    }

    @discardableResult
    public mutating func writeBytes(_ bytes: some Sequence<UInt8>) -> Int {
        if let written = bytes.withContiguousStorageIfAvailable({ writeBytes(UnsafeRawBufferPointer($0)) }) {
            return written
        }
        var count = 0
        for byte in bytes {
            prepareForWriting(extra: 1)
            storage.bytes.storeBytes(of: byte, toByteOffset: writerIndex, as: UInt8.self)
            moveWriterIndex(by: 1)
            count += 1
        }
        return count
    }

    /// Appends the readable bytes of `other` (which is not consumed).
    @discardableResult
    public mutating func writeBuffer(_ other: ByteBuffer) -> Int {
        other.withUnsafeReadableBytes { writeBytes($0) }
    }

    /// Appends the string's UTF-8 bytes, without a terminator.
    @discardableResult
    public mutating func writeString(_ string: String) -> Int {
        var string = string
        return string.withUTF8 { writeBytes(UnsafeRawBufferPointer($0)) }
    }

    // MARK: get (peek)

    public func getBytes(at index: Int, length: Int) -> [UInt8]? {
        guard isReadable(at: index, length: length) else { return nil }
        return [UInt8](UnsafeRawBufferPointer(start: storage.bytes + index, count: length))
    }

    /// The bytes decoded as UTF-8 (invalid sequences become U+FFFD).
    public func getString(at index: Int, length: Int) -> String? {
        guard isReadable(at: index, length: length) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: storage.bytes + index, count: length), as: UTF8.self)
    }

    // MARK: read (consume)

    public mutating func readBytes(length: Int) -> [UInt8]? {
        guard let bytes = getBytes(at: readerIndex, length: length) else { return nil }
        moveReaderIndex(forwardBy: length)
        return bytes
    }

    public mutating func readString(length: Int) -> String? {
        guard let string = getString(at: readerIndex, length: length) else { return nil }
        moveReaderIndex(forwardBy: length)
        return string
    }

    /// Consumes `length` bytes into a new buffer of their own.
    public mutating func readBuffer(length: Int) -> ByteBuffer? {
        guard isReadable(at: readerIndex, length: length) else { return nil }
        var slice = ByteBuffer(capacity: length)
        slice.writeBytes(UnsafeRawBufferPointer(start: storage.bytes + readerIndex, count: length))
        moveReaderIndex(forwardBy: length)
        return slice
    }

    // MARK: set (overwrite)

    @discardableResult
    public mutating func setBytes(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Bool {
        guard isReadable(at: index, length: bytes.count) else { return false }
        guard bytes.count > 0 else { return true }
        prepareForWriting(extra: 0)
        (storage.bytes + index).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        return true
    }

    @discardableResult
    public mutating func setBytes(_ bytes: some Collection<UInt8>, at index: Int) -> Bool {
        let array = Array(bytes)
        return array.withUnsafeBytes { setBytes($0, at: index) }
    }
}
