/// What a list file held, line by line: every skipped line is counted (docs/blocklists.md#list-files).
public struct ListStats: Equatable, Sendable {
    public var lines = 0
    /// Name entries taken (duplicates included; the matcher folds them).
    public var names = 0
    public var ipEntries = 0
    /// Blank and comment-only lines.
    public var comments = 0
    public var skippedInvalid = 0
    public var skippedSingleLabel = 0
    /// Hosts-file housekeeping names: `localhost`, `broadcasthost`, `ip6-*`, the address itself.
    public var skippedReserved = 0
    /// Adblock lines that are not a plain `||name^`: `@@` exceptions, `$` options, paths.
    public var skippedAdblock = 0
    /// A few skipped lines with their reason, for a warning a person can act on.
    public var examples: [String] = []

    public init() {}

    public var skipped: Int { skippedInvalid + skippedSingleLabel + skippedReserved + skippedAdblock }

    public static let maxExamples = 5

    mutating func note(_ line: UnsafeRawBufferPointer, _ why: String) {
        guard examples.count < Self.maxExamples else { return }
        examples.append("\(String(decoding: line, as: UTF8.self)): \(why)")
    }

    /// Adds another file's counts (a category folder may hold several files).
    public mutating func add(_ other: ListStats) {
        lines += other.lines
        names += other.names
        ipEntries += other.ipEntries
        comments += other.comments
        skippedInvalid += other.skippedInvalid
        skippedSingleLabel += other.skippedSingleLabel
        skippedReserved += other.skippedReserved
        skippedAdblock += other.skippedAdblock
        for example in other.examples where examples.count < Self.maxExamples { examples.append(example) }
    }
}
