/// Choices a target takes from the front of its input (split points, sizes, limits), so
/// that libFuzzer's mutations steer them as they steer the bytes parsed. Past the end every
/// choice is 0: a short input is still a valid input.
struct InputChoices {
    private let bytes: [UInt8]
    private(set) var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func uint16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }

    /// The bytes after the choices taken so far.
    var rest: [UInt8] { index < bytes.count ? Array(bytes[index...]) : [] }
}

/// Piece lengths (each ≥ 1) for feeding `count` bytes in parts, cycling through `sizes`;
/// an empty `sizes` means one piece.
func pieces(of count: Int, sizes: [UInt8]) -> [Range<Int>] {
    guard !sizes.isEmpty else { return count == 0 ? [] : [0..<count] }
    var ranges: [Range<Int>] = []
    var start = 0
    var turn = 0
    while start < count {
        let end = min(count, start + 1 + Int(sizes[turn % sizes.count]))
        ranges.append(start..<end)
        start = end
        turn += 1
    }
    return ranges
}
