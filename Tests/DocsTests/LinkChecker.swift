/// Checks that what the docs point at is in the checkout: every relative link's file
/// (relative to the page) and every path written as a word (relative to the checkout's
/// root, as `docs/dns.md#cache` or `Sources/DomainMatch/TrieLayout.swift`), and for a
/// Markdown target its `#anchor` among the target's headings. External `http(s)` links
/// are not fetched. Works on a `Tree`, so a test can hand it pages that are wrong.
struct LinkChecker {
    /// The checkout as the checker sees it: paths relative to its root, `/`-separated.
    struct Tree {
        /// The text of a file, or nil when there is no such file.
        var read: @Sendable (String) -> String?
        /// Whether a file or folder exists.
        var exists: @Sendable (String) -> Bool
    }

    let tree: Tree
    private var anchorCache: [String: Set<String>] = [:]

    init(_ tree: Tree) { self.tree = tree }

    /// The top-level names a path word must start with to be taken as a path into the
    /// checkout (so `.build/release/phosra-gate` or `STATE_DIR/lists` are not).
    static let folders = ["docs", "Sources", "Tests", "scripts", "examples", "blocklists", "systemd", ".ci"]
    static let files: Set<String> = ["README.md", "CONTRIBUTING.md", "Package.swift"]

    /// What is wrong in the page at `path`, one line each (`page: target: problem`).
    mutating func problems(inPage path: String) -> [String] {
        guard let text = tree.read(path) else { return ["\(path): no such page"] }
        var problems: [String] = []
        let directory = path.split(separator: "/").dropLast().joined(separator: "/")
        for line in MarkdownPage(text).prose {
            let references = MarkdownPage.references(in: line)
            for link in references.links where !Self.isExternal(link) {
                if let problem = check(link, relativeTo: directory, page: path) {
                    problems.append("\(path): \(link): \(problem)")
                }
            }
            for word in references.words where Self.isPathWord(word) {
                if let problem = check(word, relativeTo: "", page: path) {
                    problems.append("\(path): \(word): \(problem)")
                }
            }
        }
        return problems
    }

    /// Whether `word` is written as a path into the checkout: a top-level file, or a
    /// top-level folder followed by `/` and path characters only (no `<`, `*`, `…`).
    static func isPathWord(_ word: String) -> Bool {
        let path = word.split(separator: "#", maxSplits: 1).first.map(String.init) ?? word
        guard files.contains(path) || folders.contains(where: { path.hasPrefix($0 + "/") }) else { return false }
        return word.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                    || "._-+/#".unicodeScalars.contains(scalar))
        }
    }

    static func isExternal(_ target: String) -> Bool {
        ["http://", "https://", "mailto:"].contains { target.lowercased().hasPrefix($0) }
    }

    /// Nil when `target` (`path`, `path#anchor` or `#anchor`) resolves, else why not.
    mutating func check(_ target: String, relativeTo directory: String, page: String) -> String? {
        let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let pathPart = String(parts[0])
        let anchor = parts.count > 1 ? String(parts[1]) : nil
        let path: String
        if pathPart.isEmpty {
            path = page
        } else {
            guard let resolved = Self.resolve(pathPart, in: directory) else { return "leads outside the checkout" }
            path = resolved
            guard tree.exists(path) else { return "no such file in the checkout" }
        }
        guard let anchor else { return nil }
        guard path.hasSuffix(".md") else { return "an anchor into a file that is not Markdown" }
        return anchors(of: path).contains(anchor) ? nil : "no heading with the anchor #\(anchor) in \(path)"
    }

    private mutating func anchors(of path: String) -> Set<String> {
        if let known = anchorCache[path] { return known }
        let found = tree.read(path).map { MarkdownPage($0).anchors } ?? []
        anchorCache[path] = found
        return found
    }

    /// `target` relative to `directory`, with `.` and `..` worked out; nil above the root.
    static func resolve(_ target: String, in directory: String) -> String? {
        var parts = directory.isEmpty ? [] : directory.split(separator: "/").map(String.init)
        for part in target.split(separator: "/") {
            switch part {
            case ".": continue
            case "..":
                guard !parts.isEmpty else { return nil }
                parts.removeLast()
            default: parts.append(String(part))
            }
        }
        return parts.joined(separator: "/")
    }
}
