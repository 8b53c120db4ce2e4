/// The naive baseline of docs/benchmarks.md#targets: a `Set<String>` of the normalised names, where a
/// lookup builds each suffix of the query as a `String` at label boundaries and tests
/// membership, longest first (the first hit is the most specific).
struct NaiveMatcher {
    let names: Set<String>

    func matches(_ query: String) -> Bool {
        var suffix = query[...]
        while true {
            if names.contains(String(suffix)) { return true }
            guard let dot = suffix.firstIndex(of: ".") else { return false }
            suffix = suffix[suffix.index(after: dot)...]
        }
    }
}
