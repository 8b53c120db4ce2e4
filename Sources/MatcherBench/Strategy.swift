import DomainMatch

/// The matchers `bench matcher` compares, each behind `NameMatcher`, each built from the
/// same normalised names (docs/benchmarks.md#strategies).
public enum Strategy: String, CaseIterable, Sendable {
    case trie
    case naive
    case hashedSuffix = "hashed-suffix"
    case sortedReversed = "sorted-reversed"
    case sqlite
    /// The trie without its filter: compiled-file format 3's slots and walk, for the
    /// comparison of old and new.
    case trieV3 = "trie-v3"

    /// What one lookup does, for the table and the docs.
    public var summary: String {
        switch self {
        case .trie:
            return "one hash and a cached filter read per label; slots read only where a listed name may end"
        case .naive: return "a String per suffix, longest first, into Set<String>"
        case .hashedSuffix: return "a hash of the bytes from each label boundary, probed in one table"
        case .sortedReversed: return "a binary search per label within the run of the suffix so far"
        case .sqlite: return "one prepared indexed SELECT per suffix, longest first"
        case .trieV3: return "format 3: one hash and an ordered probe of 12-byte slots per label"
        }
    }

    /// Whether the strategy has a file form that is loaded (mapped or opened) rather than
    /// built in memory each time.
    public var hasFile: Bool { self == .trie || self == .sqlite || self == .trieV3 }

    /// The filter a trie strategy is built with: none for `trie-v3`, whether built in
    /// memory or written to its file.
    public var filterBitsPerNode: Int { self == .trieV3 ? 0 : TrieFilter.bitsPerNode }

    /// Builds a strategy in memory (`sqlite` only has a file form: see `SQLiteMatcher`).
    public func buildInMemory(_ lists: [[DomainName]]) -> (any NameMatcher)? {
        switch self {
        case .trie: return LabelTrie(lists: lists)
        case .naive: return NaiveMatcher(lists: lists)
        case .hashedSuffix: return HashedSuffixMatcher(lists: lists)
        case .sortedReversed: return SortedReversedMatcher(lists: lists)
        case .sqlite: return nil
        case .trieV3: return LabelTrie(lists: lists, filterBitsPerNode: filterBitsPerNode)
        }
    }

    /// Parses `trie,naive,…`.
    public static func parseList(_ text: String) -> [Strategy]? {
        let names = text.split(separator: ",").map { Strategy(rawValue: String($0)) }
        guard !names.isEmpty, !names.contains(where: { $0 == nil }) else { return nil }
        return names.compactMap { $0 }
    }
}
