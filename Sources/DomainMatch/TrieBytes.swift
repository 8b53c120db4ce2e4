/// The bytes behind a compiled trie: memory this process owns (a trie built in memory)
/// or a read-only file mapping (a compiled list file). Immutable once made; the owner's
/// `release` runs when the last trie using it goes away (free, or munmap).
public final class TrieBytes: @unchecked Sendable {
    // Sendable: the bytes are never written after `init`, and `release` runs once, in deinit.
    public let base: UnsafeRawPointer
    public let count: Int
    private let release: @Sendable (UnsafeRawPointer, Int) -> Void

    public init(base: UnsafeRawPointer, count: Int, release: @escaping @Sendable (UnsafeRawPointer, Int) -> Void) {
        self.base = base
        self.count = count
        self.release = release
    }

    /// Copies `bytes` into memory owned by the new object.
    public convenience init(copying bytes: [UInt8]) {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        bytes.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        self.init(base: UnsafeRawPointer(memory), count: bytes.count) { pointer, _ in
            UnsafeMutableRawPointer(mutating: pointer).deallocate()
        }
    }

    deinit { release(base, count) }

    public var buffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    @inline(__always)
    func u8(_ offset: Int) -> UInt8 { base.load(fromByteOffset: offset, as: UInt8.self) }
    @inline(__always)
    func u16(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always)
    func u32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    @inline(__always)
    func u64(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}
