import DomainMatch

/// Why a downloaded list is not put in place; the previous copy stays.
public enum ListRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// The body is not a list at all (an HTML page, binary data, nothing): why.
    case notAList(String)
    /// It holds fewer than half the names of the copy it would replace.
    case shrank(names: Int, previous: Int)

    public var description: String {
        switch self {
        case .notAList(let why): return "not a list: \(why)"
        case .shrank(let names, let previous):
            return "shrank from \(previous) to \(names) names (more than half gone); pass --force to take it"
        }
    }
}

/// The shrink guard (docs/blocklists.md#updating-lists): a source that suddenly serves
/// far fewer names is more likely broken (an error page, a cut mirror) than cleaned, and
/// taking it would open the household to what it used to block.
public enum ShrinkGuard {
    /// Whether `names` may replace a copy that held `previous`: at least half as many.
    public static func allows(names: Int, previous: Int) -> Bool { names >= previous - previous / 2 }
}

/// Checks a downloaded body before it replaces anything: it must read as a list and, unless
/// forced, hold at least half the names of the copy it replaces.
public enum DownloadCheck {
    /// Reads a category list (any of the three list formats) and says how many names it
    /// holds, or why it is not a list: a NUL byte (binary data), no name at all, or more
    /// lines that are not names than names (an HTML or error page). Adblock lines with
    /// options or paths are the format's own and do not count against it.
    public static func categoryList(_ body: [UInt8]) -> Result<ListStats, ListRefusal> {
        if body.contains(0) { return .failure(.notAList("it holds binary data (a NUL byte)")) }
        let stats = ListFile.parse(body) { _ in }
        let unreadable = stats.skippedInvalid + stats.skippedSingleLabel
        if stats.names == 0 {
            let why =
                stats.lines == 0 || stats.lines == stats.comments
                ? "no names in it" : "none of its \(stats.lines) lines is a name\(example(stats))"
            return .failure(.notAList(why))
        }
        if unreadable > stats.names {
            return .failure(.notAList("\(unreadable) of its \(stats.lines) lines are not names\(example(stats))"))
        }
        return .success(stats)
    }

    /// The shrink guard applied to a checked list of `names` replacing one of `previous`
    /// (nil: nothing to replace). `force` (`--force`) lifts it.
    public static func replaces(names: Int, previous: Int?, force: Bool) -> Result<Int, ListRefusal> {
        guard let previous, !force, !ShrinkGuard.allows(names: names, previous: previous) else {
            return .success(names)
        }
        return .failure(.shrank(names: names, previous: previous))
    }

    private static func example(_ stats: ListStats) -> String {
        guard let first = stats.examples.first else { return "" }
        let short = first.count > 80 ? String(first.prefix(77)) + "..." : first
        return " (e.g. \(short))"
    }
}
