import DomainMatch

/// List entries (`ListEntry.parse`, the parent's lists and `always_allow`) and list files
/// (`ListFile`, the category lists), line by line.
enum ListLinesTarget {
    static let target = FuzzTarget(
        "list-lines",
        "an accepted entry's text form parses again to the same entry, for block and allow lists and as a "
            + "list file line; the list file's fast path agrees with the entry parser; a file fed in pieces "
            + "gives the same entries and counts as fed whole"
    ) { input throws(PropertyViolation) in
        var choices = InputChoices(input)
        let sizes = (0..<Int(choices.byte() % 6)).map { _ in choices.byte() }
        let file = choices.rest
        let lines = file.split(separator: 0x0A, omittingEmptySubsequences: false)
        for line in lines.prefix(200) {
            let text = String(decoding: line, as: UTF8.self)
            for kind in [ListKind.block, .allow] {
                guard case .success(let entry) = ListEntry.parse(text, kind: kind) else { continue }
                try textFormRoundTrips(entry)
            }
            try fastPathAgrees(Array(line))
        }
        let whole = Items(file, in: [0..<file.count])
        let split = Items(file, in: pieces(of: file.count, sizes: sizes))
        try check(split == whole, "fed in pieces: \(split.stats); fed whole: \(whole.stats)")
    }

    static func textFormRoundTrips(_ entry: ListEntry) throws(PropertyViolation) {
        let text = entry.description
        for kind in [ListKind.block, .allow] {
            let again = ListEntry.parse(text, kind: kind)
            try check(again == .success(entry), "\(entry) reads back as \(again) (\(kind))")
        }
        let file = Items(Array(text.utf8), in: [0..<text.utf8.count])
        try check(file.items == [Item(entry)], "\(entry) as a list file line gives \(file.items)")
        if case .name(let name) = entry {
            try check(DomainName(wire: name.wire) == name, "\(name) does not survive its wire form")
        }
    }

    /// A line of one plain token goes the general way or the fast way; both must agree.
    static func fastPathAgrees(_ line: [UInt8]) throws(PropertyViolation) {
        guard !line.starts(with: [0xEF, 0xBB, 0xBF]) else { return }
        let content = line.prefix { $0 != UInt8(ascii: "#") && $0 != UInt8(ascii: "!") }
        let blank: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0B, 0x0C]
        let tokens = content.split { blank.contains($0) }
        guard tokens.count == 1, let lead = tokens[0].first, !"|@[".utf8.contains(lead) else { return }
        let expected: [Item]
        switch ListEntry.parse(String(decoding: tokens[0], as: UTF8.self), kind: .block) {
        case .success(let entry): expected = [Item(entry)]
        case .failure: expected = []
        }
        let found = Items(line, in: [0..<line.count])
        try check(found.items == expected, "\(String(decoding: line, as: UTF8.self)): \(found.items), not \(expected)")
        try check(found.stats.skipped == 1 - expected.count, "skip counted \(found.stats.skipped) times")
    }

    enum Item: Equatable, CustomStringConvertible {
        case name([UInt8])
        case ip(IPAddress)

        init(_ entry: ListEntry) {
            switch entry {
            case .name(let name): self = .name(name.bytes)
            case .ip(let address): self = .ip(address)
            }
        }

        var description: String {
            switch self {
            case .name(let bytes): String(decoding: bytes, as: UTF8.self)
            case .ip(let address): address.description
            }
        }
    }

    /// What a list file scanner hands on for a file fed in `ranges`, and its counts.
    struct Items: Equatable {
        var items: [Item] = []
        var stats = ListStats()

        init(_ file: [UInt8], in ranges: [Range<Int>]) {
            var scanner = ListFileScanner()
            var items: [Item] = []
            let sink: (ListItem) -> Void = { item in
                switch item {
                case .name(let bytes): items.append(.name(Array(bytes)))
                case .ip(let address): items.append(.ip(address))
                }
            }
            file.withUnsafeBytes { raw in
                for range in ranges { scanner.feed(UnsafeRawBufferPointer(rebasing: raw[range]), sink: sink) }
            }
            stats = scanner.finish(sink: sink)
            self.items = items
        }
    }
}
