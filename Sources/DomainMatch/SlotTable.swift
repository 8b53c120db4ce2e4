/// Writable access to a region of trie slots (`TrieLayout`): the builder's working table
/// and the slot section of the image it finally writes.
struct SlotTable {
    let base: UnsafeMutableRawPointer
    let capacity: Int

    @inline(__always) func length(_ index: Int) -> Int {
        Int(base.load(fromByteOffset: index * 12 + 8, as: UInt8.self))
    }
    @inline(__always) func parent(_ index: Int) -> UInt32 { read32(index * 12) }
    @inline(__always) func label(_ index: Int) -> UInt32 { read32(index * 12 + 4) }
    @inline(__always) func fingerprint(_ index: Int) -> UInt8 {
        base.load(fromByteOffset: index * 12 + 9, as: UInt8.self)
    }
    @inline(__always) func mask(_ index: Int) -> UInt16 {
        UInt16(littleEndian: base.loadUnaligned(fromByteOffset: index * 12 + 10, as: UInt16.self))
    }

    @inline(__always) private func read32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    func set(_ index: Int, parent: UInt32, label: UInt32, length: Int, fingerprint: UInt8, mask: UInt16) {
        let offset = index * 12
        base.storeBytes(of: parent.littleEndian, toByteOffset: offset, as: UInt32.self)
        base.storeBytes(of: label.littleEndian, toByteOffset: offset + 4, as: UInt32.self)
        base.storeBytes(of: UInt8(length), toByteOffset: offset + 8, as: UInt8.self)
        base.storeBytes(of: fingerprint, toByteOffset: offset + 9, as: UInt8.self)
        base.storeBytes(of: mask.littleEndian, toByteOffset: offset + 10, as: UInt16.self)
    }

    @inline(__always)
    func setMask(_ index: Int, _ mask: UInt16) {
        base.storeBytes(of: mask.littleEndian, toByteOffset: index * 12 + 10, as: UInt16.self)
    }

    /// The first empty slot from the hash's home, for a key known to be absent.
    @inline(__always)
    func emptySlot(from hash: UInt64) -> Int {
        var index = LabelHash.slot(hash, capacity: capacity)
        while length(index) != 0 {
            index += 1
            if index == capacity { index = 0 }
        }
        return index
    }
}
