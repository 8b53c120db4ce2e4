import DomainMatch

/// A compiled trie image as a list cache file holds it (`LabelTrie(bytes, verifyChecksum:)`).
/// After the first use a file is loaded without its checksum, so a changed file meets the
/// lookups with only the structural checks between them.
enum TrieImageTarget {
    static let target = FuzzTarget(
        "trie",
        "an image either loads or is refused with a typed error; lookups in a loaded image stay inside it "
            + "(the sanitizer watches) and report depths within the name for lists that exist"
    ) { input throws(PropertyViolation) in
        try probe(input)
        // With the magic, the version and the size field right, mutations reach past the
        // header checks instead of dying at them.
        guard input.count >= TrieLayout.headerSize else { return }
        var fixed = input
        fixed.replaceSubrange(0..<8, with: TrieLayout.magic)
        put(UInt64(TrieLayout.version), at: 8, bytes: 4, in: &fixed)
        put(UInt64(fixed.count), at: 24, bytes: 8, in: &fixed)
        try probe(fixed)
    }

    static func put(_ value: UInt64, at offset: Int, bytes: Int, in image: inout [UInt8]) {
        for index in 0..<bytes { image[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
    }

    static func probe(_ image: [UInt8]) throws(PropertyViolation) {
        let trie: LabelTrie
        do {
            trie = try LabelTrie(TrieBytes(copying: image), verifyChecksum: false)
        } catch {
            try check(!error.description.isEmpty, "an image refused without a reason")
            return
        }
        try check(trie.listCount <= MatchDepths.capacity, "\(trie.listCount) lists")
        try check(trie.listNames.count == trie.listCount, "\(trie.listNames.count) names for \(trie.listCount) lists")
        for name in names + labelNames(image) {
            let depths = trie.match(name)
            for list in 0..<MatchDepths.capacity {
                let depth = depths[list]
                try check(depth <= name.labelCount, "\(name): depth \(depth) in list \(list)")
                try check(list < trie.listCount || depth == 0, "\(name): a hit in list \(list) of \(trie.listCount)")
            }
        }
    }

    static let names: [DomainName] = [
        "com", "example.com", "www.example.com", "a.b.c.d.e.f.g.h.example.org", "xn--bcher-kva.de", "abc", "a.b",
        String(repeating: "x.", count: 120) + "com",
    ].compactMap { try? QueryName.parse($0) }

    /// Names made of runs of name bytes found in the image, so lookups meet its own labels.
    static func labelNames(_ image: [UInt8]) -> [DomainName] {
        let runs = image.split { !(0x61...0x7A).contains($0) && !(0x30...0x39).contains($0) && $0 != 0x2D }
        let labels = runs.filter { $0.count <= 63 }.prefix(8).map { String(decoding: $0, as: UTF8.self) }
        var result: [DomainName] = []
        for start in labels.indices {
            if let name = try? QueryName.parse(labels[start...].joined(separator: ".")) { result.append(name) }
        }
        return result
    }
}
