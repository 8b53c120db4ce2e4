import Glibc

/// A growable run of bytes with a reader and a writer index: `0 ≤ readerIndex ≤
/// writerIndex ≤ capacity`. The bytes in `readerIndex..<writerIndex` are *readable*.
///
/// Verbs (as in SwiftNIO): `read*` consumes readable bytes (moves `readerIndex`), `get*`
/// peeks at them without moving anything, `write*` appends at `writerIndex` (growing as
/// needed) and `set*` overwrites readable bytes in place. Indices given to `get*`/`set*`
/// are absolute positions in the buffer and must lie inside the readable bytes; anything
/// else — a short read, an index out of range — returns `nil` or `false`, never traps.
///
/// A value type with copy-on-write storage: copies share bytes until one of them is
/// mutated. Reading from a socket into a uniquely held buffer with enough writable
/// capacity does not allocate.
public struct ByteBuffer: Sendable {
    /// Heap storage. Never mutated while shared (every mutation goes through
    /// `prepareForWriting`, which copies first), so handing a buffer to another thread is safe.
    @usableFromInline
    final class Storage: @unchecked Sendable {
        @usableFromInline var bytes: UnsafeMutableRawPointer
        var capacity: Int

        init(capacity: Int) {
            self.capacity = capacity
            // malloc (not `allocate`) so that growth can use realloc, which often extends in place.
            guard let bytes = malloc(max(capacity, 1)) else { fatalError("ByteBuffer: out of memory") }
            self.bytes = bytes
        }

        func grow(to newCapacity: Int) {
            guard let bytes = realloc(bytes, newCapacity) else { fatalError("ByteBuffer: out of memory") }
            self.bytes = bytes
            capacity = newCapacity
        }

        func copy(capacity newCapacity: Int, used: Int) -> Storage {
            let copy = Storage(capacity: newCapacity)
            copy.bytes.copyMemory(from: bytes, byteCount: used)
            return copy
        }

        deinit { free(bytes) }
    }

    @usableFromInline var storage: Storage
    public internal(set) var readerIndex: Int = 0
    public internal(set) var writerIndex: Int = 0

    public init(capacity: Int = 256) {
        storage = Storage(capacity: max(capacity, 0))
    }

    public init(bytes: some Sequence<UInt8>) {
        self.init(capacity: bytes.underestimatedCount)
        writeBytes(bytes)
    }

    public var capacity: Int { storage.capacity }
    public var readableBytes: Int { writerIndex - readerIndex }
    public var writableBytes: Int { storage.capacity - writerIndex }

    /// Makes the storage unique and able to take `extra` more bytes after `writerIndex`.
    /// Growth doubles (at least 64 bytes) so appends are amortised O(1).
    @usableFromInline
    mutating func prepareForWriting(extra: Int) {
        let needed = writerIndex + max(extra, 0)
        let newCapacity = needed <= storage.capacity ? storage.capacity : max(needed, storage.capacity * 2, 64)
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy(capacity: newCapacity, used: writerIndex)
        } else if newCapacity > storage.capacity {
            storage.grow(to: newCapacity)
        }
    }

    /// Ensures at least `minimumWritableBytes` can be written without another allocation.
    public mutating func reserveCapacity(minimumWritableBytes: Int) {
        prepareForWriting(extra: minimumWritableBytes)
    }

    /// True when `index..<index+length` lies inside the readable bytes (overflow-safe).
    @usableFromInline
    func isReadable(at index: Int, length: Int) -> Bool {
        length >= 0 && index >= readerIndex && index <= writerIndex - length
    }

    // MARK: Moving the indices

    /// Skips `count` readable bytes; false (and nothing moved) if fewer are readable.
    @discardableResult
    public mutating func moveReaderIndex(forwardBy count: Int) -> Bool {
        guard count >= 0, count <= readableBytes else { return false }
        readerIndex += count
        return true
    }

    /// Marks `count` more bytes as written (after the caller filled them in place).
    @usableFromInline
    mutating func moveWriterIndex(by count: Int) {
        writerIndex += count
    }

    /// Forgets every byte and keeps the capacity.
    public mutating func clear() {
        readerIndex = 0
        writerIndex = 0
    }

    /// Moves the readable bytes to the front so their space can be written again.
    /// Absolute indices held from before the call shift down by the old `readerIndex`.
    public mutating func discardReadBytes() {
        guard readerIndex > 0 else { return }
        prepareForWriting(extra: 0)
        if readableBytes > 0 {
            storage.bytes.copyMemory(from: storage.bytes + readerIndex, byteCount: readableBytes)
        }
        writerIndex -= readerIndex
        readerIndex = 0
    }

    // MARK: Raw access

    /// Calls `body` with the readable bytes (valid only inside `body`); nothing is consumed.
    @inlinable
    public func withUnsafeReadableBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage.bytes + readerIndex, count: readableBytes))
    }

    /// Lets `body` consume from the front: it gets the readable bytes and returns how many
    /// it used (clamped to what was readable); the reader index moves by that many.
    @inlinable @discardableResult
    public mutating func readWithUnsafeReadableBytes<E: Error>(
        _ body: (UnsafeRawBufferPointer) throws(E) -> Int
    ) throws(E) -> Int {
        let used = try withUnsafeReadableBytes(body)
        let clamped = min(max(used, 0), readableBytes)
        moveReaderIndex(forwardBy: clamped)
        return clamped
    }

    /// Lets `body` append in place (a socket read): it gets at least `minimumWritableBytes`
    /// of writable space and returns how many it filled; the writer index moves by that many.
    @inlinable @discardableResult
    public mutating func writeWithUnsafeMutableBytes<E: Error>(
        minimumWritableBytes: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) -> Int {
        prepareForWriting(extra: minimumWritableBytes)
        let space = UnsafeMutableRawBufferPointer(start: storage.bytes + writerIndex, count: writableBytes)
        let written = min(max(try body(space), 0), space.count)
        moveWriterIndex(by: written)
        return written
    }
}

extension ByteBuffer: Equatable {
    /// Equal when the readable bytes are equal; indices and capacity do not matter.
    public static func == (lhs: ByteBuffer, rhs: ByteBuffer) -> Bool {
        guard lhs.readableBytes == rhs.readableBytes else { return false }
        return lhs.withUnsafeReadableBytes { a in
            rhs.withUnsafeReadableBytes { b in a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
    }
}
