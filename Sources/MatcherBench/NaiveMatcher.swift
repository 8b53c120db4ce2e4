import DomainMatch

/// `naive`, the baseline of docs/benchmarks.md#targets: a `Set<String>` of the normalised
/// names per list; a lookup builds each suffix of the query as a `String` at label
/// boundaries, longest first, and tests membership (the first hit is the most specific).
public struct NaiveMatcher: NameMatcher {
    let lists: [Set<String>]
    public var listCount: Int { lists.count }

    public init(lists: [[DomainName]]) {
        self.lists = lists.map { Set($0.map(\.description)) }
    }

    public func match(_ name: DomainName, into depths: inout MatchDepths) {
        name.bytes.withUnsafeBytes { match(bytes: $0, labelCount: name.labelCount, into: &depths) }
    }

    public func match(bytes: UnsafeRawBufferPointer, labelCount: Int, into depths: inout MatchDepths) {
        depths = MatchDepths()
        for (list, names) in lists.enumerated() {
            var start = 0
            var labels = labelCount
            while true {
                if names.contains(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start...]), as: UTF8.self)) {
                    depths[list] = labels
                    break
                }
                guard let dot = bytes[start...].firstIndex(of: UInt8(ascii: ".")) else { break }
                start = dot + 1
                labels -= 1
            }
        }
    }
}
