/// What a policy asked for that the gateway could not enforce exactly: the raw material
/// of the `partial` results in the enforcement report (docs/sync.md#enforcement-report) and of `check`'s notes.
public struct PolicyNotes: Equatable, Sendable {
    /// `web_filter.level` when it is not a known level (enforced as moderate).
    public var unknownLevel: String?
    /// `blocked_categories` entries that are neither an id nor a synonym.
    public var unknownCategories: [String] = []
    /// Skipped parent-list entries: the raw entry and why.
    public var skippedBlocked: [Skipped] = []
    public var skippedAllowed: [Skipped] = []
    /// Downtime windows that are void, with why.
    public var voidWindows: [String] = []
    /// Day names that were not understood, with the window they came from.
    public var unknownDays: [String] = []
    /// Schedule halves that were ignored, with why.
    public var ignoredHalves: [String] = []

    public struct Skipped: Equatable, Sendable, CustomStringConvertible {
        public let entry: String
        public let reason: String
        public var description: String { "\"\(entry)\" (\(reason))" }
    }

    public init() {}

    /// One line per note, for people.
    public var lines: [String] {
        var lines: [String] = []
        if let level = unknownLevel { lines.append("web_filter.level \"\(level)\" is unknown; enforced as moderate") }
        lines += unknownCategories.map { "blocked_categories: \"\($0)\" is not a known category; ignored" }
        lines += skippedBlocked.map { "blocked_domains: skipped \($0)" }
        lines += skippedAllowed.map { "allowed_domains: skipped \($0)" }
        lines += voidWindows.map { "downtime_windows: \($0)" }
        lines += unknownDays.map { "downtime_windows: \($0)" }
        lines += ignoredHalves.map { "schedule: \($0)" }
        return lines
    }
}
