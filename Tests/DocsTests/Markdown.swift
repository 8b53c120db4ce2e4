/// The parts of a Markdown page the link check reads: headings (as GitHub anchors), links,
/// and paths written in inline code or plain prose. Fenced code blocks are skipped:
/// commands and examples there are not references. Only the Markdown this project
/// writes is understood (ATX headings, inline and reference links, backtick spans).
struct MarkdownPage {
    /// The page's lines outside fenced code blocks.
    let prose: [Substring]

    init(_ text: String) {
        var lines: [Substring] = []
        var fence: Substring?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            if let open = fence {
                if trimmed.hasPrefix(open) { fence = nil }
                continue
            }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                fence = trimmed.prefix(3)
                continue
            }
            lines.append(line)
        }
        prose = lines
    }

    /// The anchors of the page's headings, as GitHub makes them: a repeated heading gets
    /// `-1`, `-2`, … after its first use.
    var anchors: Set<String> {
        var seen: [String: Int] = [:]
        var result = Set<String>()
        for line in prose {
            let hashes = line.prefix { $0 == "#" }.count
            guard (1...6).contains(hashes), line.dropFirst(hashes).first == " " else { continue }
            let slug = Self.anchor(for: line.dropFirst(hashes + 1).trimmingCharacters())
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            result.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return result
    }

    /// GitHub's anchor for a heading's text: lowercase, every space a `-`, and every
    /// character that is not a letter, digit, `-`, `_` or space dropped (backticks and
    /// other punctuation included).
    static func anchor(for heading: String) -> String {
        var slug = ""
        for scalar in heading.lowercased().unicodeScalars {
            if scalar == " " {
                slug.append("-")
            } else if scalar == "-" || scalar == "_" || scalar.properties.isAlphabetic
                || scalar.properties.numericType != nil
            {
                slug.unicodeScalars.append(scalar)
            }
        }
        return slug
    }

    /// What one line refers to: link targets (`[text](target)`, `![alt](target)`,
    /// `[label]: target`) and the words of its inline code spans and plain text.
    struct References {
        var links: [String] = []
        var words: [String] = []
    }

    static func references(in line: Substring) -> References {
        var result = References()
        var plain = ""
        var rest = line[...]
        // Code spans first: what is inside them is never a link.
        while let open = rest.firstIndex(of: "`") {
            let ticks = rest[open...].prefix { $0 == "`" }
            let after = rest[ticks.endIndex...]
            guard let close = after.firstRange(of: ticks) else { break }
            plain += rest[..<open] + " "
            result.words += after[..<close.lowerBound].split(separator: " ").map(String.init)
            rest = after[close.upperBound...]
        }
        plain += rest
        var text = Substring(plain)
        let indent = text.prefix { $0 == " " }.count
        if indent <= 3, text.dropFirst(indent).hasPrefix("["), let colon = text.firstRange(of: "]:") {
            // A reference definition: `[label]: target`.
            result.links.append(Self.target(at: text[colon.upperBound...]))
            text = ""
        }
        while let open = text.firstRange(of: "](") {
            result.links.append(Self.target(at: text[open.upperBound...]))
            result.words += Self.words(text[..<open.lowerBound])
            text = text[open.upperBound...].drop { $0 != ")" }.dropFirst()
        }
        result.words += Self.words(text)
        return result
    }

    /// The target at the start of `text`: up to white space or `)`, angle brackets removed.
    static func target(at text: Substring) -> String {
        let start = text.drop { $0 == " " }
        let target =
            start.hasPrefix("<") ? start.dropFirst().prefix { $0 != ">" } : start.prefix { $0 != ")" && $0 != " " }
        return String(target)
    }

    /// The words of plain text, without the punctuation around them.
    static func words(_ text: Substring) -> [String] {
        text.split(whereSeparator: { " ()[],;\"'*".contains($0) }).map { String($0.trimmingSuffix(".:!?")) }
    }
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        String(drop { $0 == " " || $0 == "#" }.reversed().drop { $0 == " " || $0 == "#" }.reversed())
    }

    func trimmingSuffix(_ characters: String) -> SubSequence {
        var end = endIndex
        while end > startIndex, characters.contains(self[index(before: end)]) { end = index(before: end) }
        return self[startIndex..<end]
    }
}
