/// The compiled trie's byte layout, shared by the in-memory image and the file
/// (docs/blocklists.md): little-endian, position-independent, a header, a section table, sections.
///
/// ```
/// header (64 bytes)
///   0  magic "PGTRIE\r\n"       8  format version (u32)   12 section count (u32)
///   16 checksum of the whole file but these 8 bytes (u64)  24 file size (u64)
///   32 input key (u64)          40 node count (u32)       44 slot capacity (u32)
///   48 list count (u32)         52 name count (u32)       56 reserved (8)
/// section table: count × { kind u32, reserved u32, offset u64, length u64 }
/// sections (8-byte aligned): slots, label pool, list names
/// ```
/// A slot is 12 bytes: parent node id (u32, 0 = root, else slot index + 1), label (u32:
/// bytes inline when the label has ≤ 4 bytes, else an offset in the label pool), label
/// length (u8, 0 = empty slot), fingerprint (u8, low hash byte), list mask (u16).
public enum TrieLayout {
    public static let magic: [UInt8] = Array("PGTRIE\r\n".utf8)
    public static let version: UInt32 = 1
    public static let headerSize = 64
    public static let sectionEntrySize = 24
    public static let slotSize = 12
    public static let maxLists = 16

    public enum Section: UInt32, CaseIterable, Sendable {
        case slots = 1
        case labels = 2
        case listNames = 3
    }

    /// Slots per node: a load of 3/4 keeps linear probes short and the file small.
    static func capacity(forNodes nodes: Int) -> Int { max(8, nodes + nodes / 3 + 1) }

    static func align8(_ value: Int) -> Int { (value + 7) & ~7 }
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

    public static func compute(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var a: UInt64 = 0x243F_6A88_85A3_08D3
        var b: UInt64 = 0x1319_8A2E_0370_7344
        var offset = 0
        let count = bytes.count
        guard let base = bytes.baseAddress else { return a ^ b }
        while offset + 16 <= count {
            a =
                (a ^ UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                &* 0x9E37_79B9_7F4A_7C15
            b =
                (b ^ UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
                &* 0xC2B2_AE3D_27D4_EB4F
            a = (a << 27) | (a >> 37)
            b = (b << 31) | (b >> 33)
            offset += 16
        }
        while offset < count {
            a = (a ^ UInt64(base.load(fromByteOffset: offset, as: UInt8.self))) &* 0x9E37_79B9_7F4A_7C15
            offset += 1
        }
        var h = a ^ (b &* 0xFF51_AFD7_ED55_8CCD) ^ UInt64(count)
        h ^= h >> 33
        h = h &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }
}
