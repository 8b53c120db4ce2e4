/// The compiled trie's byte layout, shared by the in-memory image and the file
/// (docs/blocklists.md#compiled-lists): little-endian, position-independent, a header, a
/// section table, sections.
///
/// ```
/// header (64 bytes)
///   0  magic "PGTRIE\r\n"       8  format version (u32)   12 section count (u32)
///   16 checksum of the whole file but these 8 bytes (u64)  24 file size (u64)
///   32 input key (u64)          40 node count (u32)       44 home slots (u32)
///   48 list count (u32)         52 name count (u32)       56 table slots (u32)  60 reserved (4)
/// section table: count × { kind u32, reserved u32, offset u64, length u64 }
/// sections (64-byte aligned): slots, list names, filter, mask table, slot masks, seed
/// ```
/// A node is one suffix of a listed name (`com`, `example.com`, …); its 64-bit hash chains
/// the labels from the right (`LabelHash`), starting from the file's seed. A slot is 12
/// bytes: key (u32), parent (u32: the parent's slot + 1, 0 = a top-level label), check
/// (u32).
///
/// key: 0 = empty, else 31 bits of the hash (`LabelHash.key`) above a terminal bit (a
/// listed name ends here). The keys are ascending, each slot at or after its home slot
/// (`LabelHash.home`), so a probe stops at the first larger key or empty slot, and nodes
/// whose keys are equal lie side by side. check: the hash's low 32 bits (`LabelHash.check`).
/// A suffix is the node whose key and check are its hash's and whose parent is the slot of
/// the suffix above it: 63 bits of a hash keyed by a seed drawn when the file is built,
/// and a parent confirmed the same way up to the top-level label. The builder refuses a
/// seed under which two nodes with one parent would share key and check (and draws
/// another), so a listed name is always found and only its own suffixes find its slot.
///
/// slot masks: the lists (categories) whose names end at each slot, one per slot in slot
/// order, 0 for a slot where none does: nothing for one list (its mask is implied); one
/// byte for up to 8, the mask itself; for more, one byte that indexes the mask table (u16
/// each, the distinct masks in use, ascending) when there are at most 256 of them, else
/// the mask itself (2 bytes) and an empty table. Names are in few combinations of lists,
/// so the twelve categories keep one byte a slot.
///
/// filter: 64-bit words, about 8 bits a node, small enough to stay in the cache while the
/// slots do not. Each node sets two bits of one word chosen by its hash, and a terminal
/// node two more: a lookup walks a name the lists do not cover on these words alone and
/// reads the slots only where a listed name may end (`TrieFilter`). Empty (length 0): the
/// walk reads the slots at every label.
///
/// seed: 8 bytes, the hash of the root. Drawn at random for every build, so that nobody
/// can make up a name whose hash is a listed name's without the file.
public enum TrieLayout {
    public static let magic: [UInt8] = Array("PGTRIE\r\n".utf8)
    /// 8: no label bytes; a slot keeps 32 more bits of its hash (keyed by a seed of the
    /// file's own), its lists are in a byte a slot beside the slots, and a listed name is
    /// confirmed from its slots alone (format 7 kept each node's label in a record of a
    /// label section, 40 % of the file, and read it where a name ended: a second wait on
    /// memory); 7: with more than 8 lists, a terminal record's mask is a one-byte index
    /// into a mask table (format 6 kept the two-byte mask); 6: terminal nodes with the
    /// same label and lists share a label record; 5: the filter's terminal nodes set two
    /// bits, not one (a format-4 filter read as format 5 would miss listed names); 4: a
    /// filter section in front of the slots; 3: 31-bit keys with the terminal bit, labels
    /// hashed 8 bytes at a time; 2: 32-bit checks, a byte-at-a-time hash; 1: slots keyed by
    /// parent slot and label.
    public static let version: UInt32 = 8
    public static let headerSize = 64
    public static let sectionEntrySize = 24
    public static let slotSize = 12
    public static let maxLists = 16

    public enum Section: UInt32, CaseIterable, Sendable {
        case slots = 1
        case listNames = 3
        case filter = 4
        case masks = 5
        case slotMasks = 6
        case seed = 7
    }

    /// Home slots per node: at a load of 8/9 an ordered probe still ends within a cache
    /// line or two (it stops at the first larger key, found or not).
    static func homes(forNodes nodes: Int) -> Int { max(8, nodes + nodes / 8 + 1) }

    /// Bytes of list mask a slot has, for `masks` entries in the mask table.
    static func maskBytes(listCount: Int, masks: Int) -> Int {
        listCount <= 1 ? 0 : listCount <= 8 || masks > 0 ? 1 : 2
    }

    /// Entries a mask table holds at most: an index is one byte.
    static let maxMaskTable = 256

    static func align64(_ value: Int) -> Int { (value + 63) & ~63 }
}

/// Why a compiled trie image cannot be used. A bad file is rebuilt from the text lists,
/// never served.
public enum TrieImageError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooShort(size: Int)
    case badMagic
    case unsupportedVersion(UInt32)
    case sizeMismatch(header: UInt64, actual: Int)
    case badSection(kind: UInt32, reason: String)
    case missingSection(TrieLayout.Section)
    case checksumMismatch(stored: UInt64, computed: UInt64)
    case badCounts(String)

    public var description: String {
        switch self {
        case .tooShort(let size): return "file is \(size) bytes, shorter than a header"
        case .badMagic: return "not a phosra-gate compiled list (bad magic)"
        case .unsupportedVersion(let version):
            return "format version \(version), this build reads \(TrieLayout.version)"
        case .sizeMismatch(let header, let actual): return "header says \(header) bytes, file has \(actual)"
        case .badSection(let kind, let reason): return "section \(kind): \(reason)"
        case .missingSection(let section): return "missing section \(section)"
        case .checksumMismatch(let stored, let computed):
            return "checksum mismatch (stored \(String(stored, radix: 16)), computed \(String(computed, radix: 16)))"
        case .badCounts(let reason): return reason
        }
    }
}

/// The checksum over a byte range: 64-bit, word at a time, with fixed constants.
public enum TrieChecksum {
    /// The checksum of a whole image, skipping the 8 bytes at 16 where it is stored.
    public static func image(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let head = compute(UnsafeRawBufferPointer(rebasing: bytes[0..<16]))
        let rest = compute(UnsafeRawBufferPointer(rebasing: bytes[24...]))
        var h = head &* 0x9E37_79B9_7F4A_7C15 ^ rest
        h ^= h >> 32
        return h
    }

    /// Four independent lanes of 8 bytes, so the multiplies overlap: the checksum runs at
    /// memory speed and a load stays within its time budget (docs/benchmarks.md#targets).
    public static func compute(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var lanes: (UInt64, UInt64, UInt64, UInt64) = (
            0x243F_6A88_85A3_08D3, 0x1319_8A2E_0370_7344, 0xA409_3822_299F_31D0, 0x082E_FA98_EC4E_6C89
        )
        var offset = 0
        let count = bytes.count
        guard let base = bytes.baseAddress else { return lanes.0 ^ lanes.1 }
        @inline(__always) func word(_ at: Int) -> UInt64 {
            UInt64(littleEndian: base.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        }
        @inline(__always) func mix(_ lane: UInt64, _ value: UInt64, _ k: UInt64) -> UInt64 {
            let m = (lane ^ value) &* k
            return (m << 29) | (m >> 35)
        }
        while offset + 32 <= count {
            lanes.0 = mix(lanes.0, word(offset), 0x9E37_79B9_7F4A_7C15)
            lanes.1 = mix(lanes.1, word(offset + 8), 0xC2B2_AE3D_27D4_EB4F)
            lanes.2 = mix(lanes.2, word(offset + 16), 0x1656_67B1_9E37_79F9)
            lanes.3 = mix(lanes.3, word(offset + 24), 0xFF51_AFD7_ED55_8CCD)
            offset += 32
        }
        var a = lanes.0 ^ (lanes.1 &* 0x9E37_79B9_7F4A_7C15) ^ (lanes.2 &* 0xC2B2_AE3D_27D4_EB4F) ^ lanes.3
        while offset < count {
            a = (a ^ UInt64(base.load(fromByteOffset: offset, as: UInt8.self))) &* 0x9E37_79B9_7F4A_7C15
            offset += 1
        }
        var h = a ^ UInt64(count)
        h ^= h >> 33
        h = h &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }
}
