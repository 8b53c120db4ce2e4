import DomainMatch

/// The trie from names to image and back (`LabelTrieBuilder`, `LabelTrie`), checked against
/// the plainest matcher there is: a set of names per list, probed with every suffix.
enum TrieBuildTarget {
    static let target = FuzzTarget(
        "trie-build",
        "a trie built from the input's names, written and loaded back with its checksum, answers every "
            + "lookup exactly as a set-based suffix match over the same lists"
    ) { input throws(PropertyViolation) in
        var choices = InputChoices(input)
        let listCount = 1 + Int(choices.byte() % 16)
        var lists = [Set<[UInt8]>](repeating: [], count: listCount)
        var listed: [DomainName] = []
        // A fixed seed: an input that fails must fail again when replayed.
        var builder = LabelTrieBuilder(listCount: listCount, seed: 0x243F_6A88_85A3_08D3)
        for line in choices.rest.split(separator: 0x0A).prefix(300) {
            guard let list = line.first.map({ Int($0) % listCount }),
                let name = try? QueryName.parse(String(decoding: line.dropFirst(), as: UTF8.self))
            else { continue }
            builder.insert(name, list: list)
            lists[list].insert(name.bytes)
            listed.append(name)
        }
        let pairs = lists.reduce(0) { $0 + $1.count }
        try check(builder.nameCount == pairs, "builder counts \(builder.nameCount) names, the sets \(pairs)")
        let built = builder.build(listNames: (0..<listCount).map { "list\($0)" })
        let trie: LabelTrie
        do {
            trie = try LabelTrie(TrieBytes(copying: Array(built.buffer)), verifyChecksum: true)
        } catch {
            throw PropertyViolation(problem: "a freshly built image does not load: \(error)")
        }
        try check(trie.nameCount == pairs && trie.listCount == listCount, "loaded counts differ")
        for name in queries(listed) {
            let depths = trie.match(name)
            for list in 0..<listCount {
                let expected = depth(name, in: lists[list])
                try check(depths[list] == expected, "\(name) in list \(list): trie \(depths[list]), set \(expected)")
            }
        }
    }

    /// The deepest suffix of `name` (in labels) that the set holds, 0 when none.
    static func depth(_ name: DomainName, in set: Set<[UInt8]>) -> Int {
        var best = 0
        for labels in 1...name.labelCount where set.contains(name.suffix(labels: labels).bytes) { best = labels }
        return best
    }

    /// Every listed name, a name below it, its parent, and names that share labels with
    /// another listed name without being under it.
    static func queries(_ listed: [DomainName]) -> [DomainName] {
        var texts: [String] = []
        for (index, name) in listed.prefix(100).enumerated() {
            let text = name.description
            texts += [text, "www." + text, "x" + text]
            if name.labelCount > 1 { texts.append(name.suffix(labels: name.labelCount - 1).description) }
            let other = listed[(index + 1) % listed.count].description
            texts.append(text.split(separator: ".").first.map { "\($0).\(other)" } ?? other)
        }
        return texts.compactMap { try? QueryName.parse($0) }
    }
}
