import TestSupport
import Testing

@testable import DomainMatch

/// `LabelHash.label` reads 8 bytes at a time and pretends dots before the name; it must
/// find the same label and give the same hash as the definition read a byte at a time,
/// wherever the label sits, or the trie built from list text and the lookup on a query
/// would disagree.
@Suite struct LabelHashTests {
    /// The definition: from the label's end, each full 8-byte chunk (little-endian) folded
    /// into the seed while more than 8 bytes are left, then the first 1 to 8 bytes and the
    /// length.
    static func reference(_ label: [UInt8], seed: UInt64) -> UInt64 {
        func chunk(_ bytes: ArraySlice<UInt8>) -> UInt64 {
            var value: UInt64 = 0
            for (index, byte) in bytes.enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
            return value
        }
        var h = seed
        var rest = label.count
        while rest > 8 {
            h = LabelHash.multiplyFold(h ^ chunk(label[(rest - 8)..<rest]) ^ LabelHash.p1, LabelHash.p3)
            rest -= 8
        }
        return LabelHash.multiplyFold(h ^ chunk(label[0..<rest]) ^ LabelHash.p1, LabelHash.p2 ^ UInt64(label.count))
    }

    @Test(arguments: [1, 2, 3])
    func everyLabelOfRandomNamesMatchesTheDefinition(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789-_".utf8) + [0x00, 0xFF, 0x80]
        for _ in 0..<3000 {
            var labels: [[UInt8]] = []
            var total = -1
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let length = [1, 2, 3, 6, 7, 8, 9, 15, 16, 17, 24, 63].randomElement(using: &random)!
                guard total + 1 + length <= 253 else { break }
                labels.append((0..<length).map { _ in alphabet.randomElement(using: &random)! })
                total += 1 + length
            }
            if labels.isEmpty { labels = [[UInt8(ascii: "a")]] }
            let name = Array(labels.joined(separator: [UInt8(ascii: ".")]))
            name.withUnsafeBytes { buffer in
                var seed = UInt64.random(in: .min ... .max, using: &random)
                var end = name.count
                for label in labels.reversed() {
                    let (start, hash) = LabelHash.label(buffer, end: end, seed: seed)
                    #expect(start == end - label.count, "\(labels)")
                    #expect(hash == Self.reference(label, seed: seed), "\(labels)")
                    // On its own, as the builder hashes it again under another seed.
                    #expect(label.withUnsafeBytes { LabelHash.label($0, seed: seed) } == hash, "\(labels)")
                    seed = hash
                    end = start - 1
                }
            }
        }
    }

    @Test func anEmptyLabelIsReportedAsEmpty() {
        let name = Array("a..com".utf8)
        name.withUnsafeBytes { buffer in
            let (start, _) = LabelHash.label(buffer, end: 2, seed: 1)
            #expect(start == 2)
        }
    }
}
