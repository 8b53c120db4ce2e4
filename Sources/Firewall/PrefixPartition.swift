import DomainMatch
import Policy

/// Address ranges that may nest (`192.168.1.0/24` for one profile, `192.168.1.20` inside
/// it for another) turned into disjoint CIDR blocks, each address labelled by the longest
/// range that holds it — the rule a profile's `clients` follow
/// (docs/configuration.md#profiles). nftables interval sets refuse overlapping elements,
/// and a set can only say "in" or "out", so the longest-prefix choice is made here.
/// Adjacent blocks of one label are merged back into their parent, so a list without
/// nesting comes out as it went in (sorted, without duplicates).
enum PrefixPartition {
    struct Block: Equatable {
        var value: UInt128
        var length: Int
        var label: Bool
    }

    /// The blocks of `ranges` of one family (`bitWidth` 32 or 128), in address order;
    /// addresses no range holds are in no block.
    static func blocks(_ ranges: [(range: AddressRange, label: Bool)], bitWidth: Int) -> [Block] {
        let entries = ranges.map { item in
            let value = Self.value(item.range.address)
            return Block(
                value: value & mask(item.range.prefixLength, bitWidth), length: item.range.prefixLength,
                label: item.label)
        }.sorted { ($0.value, $0.length, $0.label ? 1 : 0) < ($1.value, $1.length, $1.label ? 1 : 0) }
        return walk(value: 0, length: 0, bitWidth: bitWidth, inherited: nil, entries: entries)
    }

    /// Every block of `ranges` (one family), all with one label: duplicates and nested
    /// ranges merged.
    static func union(_ ranges: [AddressRange], bitWidth: Int) -> [AddressRange] {
        blocks(ranges.map { ($0, true) }, bitWidth: bitWidth).map { range($0, bitWidth: bitWidth) }
    }

    /// The block at `value`/`length`: the label the longest entry equal to it or above it
    /// gives, split in two while some entry lies strictly inside. Depth is at most the
    /// address width; the work grows with the number of entries times the width.
    private static func walk(value: UInt128, length: Int, bitWidth: Int, inherited: Bool?, entries: [Block]) -> [Block]
    {
        var label = inherited
        var inner: [Block] = []
        for entry in entries {
            if entry.length == length { label = entry.label } else { inner.append(entry) }
        }
        guard !inner.isEmpty else { return label.map { [Block(value: value, length: length, label: $0)] } ?? [] }
        let bit = UInt128(1) << UInt128(bitWidth - length - 1)
        let low = walk(
            value: value, length: length + 1, bitWidth: bitWidth, inherited: label,
            entries: inner.filter { $0.value & bit == 0 })
        let high = walk(
            value: value | bit, length: length + 1, bitWidth: bitWidth, inherited: label,
            entries: inner.filter { $0.value & bit != 0 })
        if low.count == 1, high.count == 1, low[0].length == length + 1, high[0].length == length + 1,
            low[0].label == high[0].label
        {
            return [Block(value: value, length: length, label: low[0].label)]
        }
        return low + high
    }

    static func range(_ block: Block, bitWidth: Int) -> AddressRange {
        let address: IPAddress =
            bitWidth == 32
            ? .v4(UInt32(truncatingIfNeeded: block.value))
            : .v6(high: UInt64(truncatingIfNeeded: block.value >> 64), low: UInt64(truncatingIfNeeded: block.value))
        return AddressRange(address: address, prefixLength: block.length)
    }

    private static func value(_ address: IPAddress) -> UInt128 {
        switch address {
        case .v4(let value): UInt128(value)
        case .v6(let high, let low): UInt128(high) << 64 | UInt128(low)
        }
    }

    private static func mask(_ length: Int, _ bitWidth: Int) -> UInt128 {
        guard length > 0 else { return 0 }
        let ones: UInt128 = bitWidth == 128 ? .max : (UInt128(1) << UInt128(bitWidth)) - 1
        return ones ^ (ones >> UInt128(length))
    }
}
