import Foundation
import Testing

/// The project's docs are its own: every link and path in README.md, CONTRIBUTING.md and
/// docs/*.md leads to a file (and heading) in this checkout, and code comments cite only
/// those pages, never a document that is not in the repository.
@Suite struct DocsTests {
    /// The checkout's root: this file is `Tests/DocsTests/DocsTests.swift`.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let checkout = LinkChecker.Tree(
        read: { path in try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8) },
        exists: { path in FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path) })

    /// README.md, CONTRIBUTING.md and every page under docs/, those in its folders
    /// (docs/setups/) included.
    static var pages: [String] {
        ["README.md", "CONTRIBUTING.md"] + files(under: ["docs"]).filter { $0.hasSuffix(".md") }.sorted()
    }

    @Test func linksAndPathsInTheDocsResolve() {
        #expect(Self.pages.count > 2, "no pages in docs/")
        #expect(Self.pages.contains("docs/setups/pi-router.md"), "the pages in docs/setups/ are not checked")
        var checker = LinkChecker(Self.checkout)
        for page in Self.pages {
            for problem in checker.problems(inPage: page) { Issue.record("\(problem)") }
        }
    }

    /// Comments in Sources/ and Tests/ cite the pages in docs/, with an anchor, and those
    /// citations must resolve; they never cite the product contract or the API notes that
    /// live outside the repository.
    @Test func codeCitesOnlyPagesInTheRepository() {
        // Compared ignoring case, and spelt in pieces so that this file does not contain them.
        let outside = [
            "spec" + " §", "spec" + ".md", "the spec" + " ", "phosra-api" + ".md", "style" + " habit",
            "shared" + "/policies",
        ]
        var checker = LinkChecker(Self.checkout)
        var filesChecked = 0
        for path in Self.files(under: ["Sources", "Tests"]) {
            guard let text = Self.checkout.read(path) else { continue }
            let lowered = text.lowercased()
            filesChecked += 1
            for phrase in outside {
                let count = lowered.ranges(of: phrase).count
                if count > 0 {
                    Issue.record("\(path): cites \"\(phrase)\" \(count) time(s); cite a docs/ page instead")
                }
            }
            guard path.hasSuffix(".swift") else { continue }
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                guard let comment = line.firstRange(of: "//").map({ line[$0.upperBound...] }) else { continue }
                for target in Self.citations(in: comment) {
                    if let problem = checker.check(target, relativeTo: "", page: path) {
                        Issue.record("\(path):\(number + 1): \(target): \(problem)")
                    }
                }
            }
        }
        #expect(filesChecked > 100)
    }

    /// Every citation of a page in docs/ in `text`, with its `#anchor` when it has one.
    static func citations(in text: Substring) -> [String] {
        let isNameCharacter = { (c: Character) in c.isASCII && (c.isLetter || c.isNumber || c == "_" || c == "-") }
        var found: [String] = []
        var rest = text
        while let start = rest.firstRange(of: "docs/") {
            let name = rest[start.upperBound...].prefix(while: isNameCharacter)
            rest = rest[name.endIndex...]
            guard !name.isEmpty, rest.hasPrefix(".md") else { continue }
            rest = rest.dropFirst(3)
            var citation = "docs/\(name).md"
            if rest.hasPrefix("#") {
                let anchor = rest.dropFirst().prefix(while: isNameCharacter)
                if !anchor.isEmpty { citation += "#\(anchor)" }
                rest = rest[anchor.endIndex...]
            }
            found.append(citation)
        }
        return found
    }

    /// Every regular file under `folders`, as checkout-relative paths.
    static func files(under folders: [String]) -> [String] {
        folders.flatMap { folder -> [String] in
            guard let walker = FileManager.default.enumerator(atPath: root.appendingPathComponent(folder).path) else {
                return []
            }
            return walker.compactMap { entry -> String? in
                guard let relative = entry as? String else { return nil }
                var isDirectory: ObjCBool = false
                let path = folder + "/" + relative
                let exists = FileManager.default.fileExists(
                    atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory)
                return exists && !isDirectory.boolValue ? path : nil
            }
        }
    }

    // MARK: The checker itself

    @Test func anchorsFollowGitHubsRule() {
        #expect(
            MarkdownPage.anchor(for: "Set up (Debian 12 with the Swift 6.3 toolchain, as root or with sudo)")
                == "set-up-debian-12-with-the-swift-63-toolchain-as-root-or-with-sudo")
        #expect(MarkdownPage.anchor(for: "`phosra-gate run`") == "phosra-gate-run")
        #expect(MarkdownPage.anchor(for: "Downtime — and schedule") == "downtime--and-schedule")
        #expect(MarkdownPage.anchor(for: "SIGHUP, SIGTERM and SIGUSR1") == "sighup-sigterm-and-sigusr1")
        #expect(MarkdownPage("# A\ntext\n## A\n```\n# not a heading\n```\n### B_c").anchors == ["a", "a-1", "b_c"])
    }

    @Test func theCheckerFindsWhatIsBroken() {
        let files = [
            "README.md": """
            [fine](docs/a.md#two-words) [gone](docs/missing.md) [no anchor](docs/a.md#nope) `Sources/X.swift`
            see Sources/Gone.swift and [outside](../notes.md), [web](https://example.org/nowhere)
            `blocklists/<category>/` is a pattern, not a path
            ```
            [in a fence](nowhere.md) Sources/Nowhere.swift
            ```
            [ref]: docs/a.md#title
            """,
            "docs/a.md": "# Title\n## Two words\n[back](../README.md) and [here](#two-words), [there](#gone)\n",
        ]
        let existing: Set<String> = ["", "docs", "Sources", "Sources/X.swift", "blocklists"]
        var checker = LinkChecker(
            LinkChecker.Tree(read: { files[$0] }, exists: { files[$0] != nil || existing.contains($0) }))
        #expect(
            checker.problems(inPage: "README.md") == [
                "README.md: docs/missing.md: no such file in the checkout",
                "README.md: docs/a.md#nope: no heading with the anchor #nope in docs/a.md",
                "README.md: ../notes.md: leads outside the checkout",
                "README.md: Sources/Gone.swift: no such file in the checkout",
            ])
        #expect(
            checker.problems(inPage: "docs/a.md") == ["docs/a.md: #gone: no heading with the anchor #gone in docs/a.md"]
        )
        #expect(
            Self.citations(in: "see docs/dns.md#cache, docs/sync.md; not docs/*.md or docs/notes.txt")
                == ["docs/dns.md#cache", "docs/sync.md"])
    }
}
